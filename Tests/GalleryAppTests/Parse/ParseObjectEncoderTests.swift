import Foundation
import Testing

@testable import GalleryApp

/// Rows to Parse JSON: exact bytes for sample rows.
@Suite struct ParseObjectEncoderTests {
    let encoder = ParseObjectEncoder(publicURL: "https://photos.example/", bucket: "bucket")

    static var photoRow: DictionaryRow {
        DictionaryRow([
            "object_id": "AbCdEf1234", "created_at": isoDate("2024-05-06T07:08:09.123Z"),
            "updated_at": isoDate("2024-05-06T07:08:10.456Z"),
            "filename": "IMG_0001.JPG", "title": "Sunset \"beach\"\n\u{1}é🌅", "tags": ["sea", "sun"],
            "content_type": "image/jpeg",
            "byte_size": 123_456, "checksum": "abc", "width": 4032, "height": 3024, "aspect_ratio": 1.3333333333333333,
            "taken_at": isoDate("2023-12-31T23:59:59.999Z"), "status": "ready", "dominant_color": "#aabbcc",
            "original_key": "originals/abc.jpg", "thumbnail_key": "thumbnails/AbCdEf1234.jpg", "thumbnail_width": 400,
            "thumbnail_height": 300,
        ])
    }

    static let photoJSON =
        #"{"objectId":"AbCdEf1234","createdAt":"2024-05-06T07:08:09.123Z","updatedAt":"2024-05-06T07:08:10.456Z","#
        + #""filename":"IMG_0001.JPG","title":"Sunset \"beach\"\n\u0001é🌅","tags":["sea","sun"],"contentType":"image/jpeg","#
        + #""byteSize":123456,"checksum":"abc","width":4032,"height":3024,"aspectRatio":1.3333333333333333,"#
        + ##""takenAt":{"__type":"Date","iso":"2023-12-31T23:59:59.999Z"},"status":"ready","dominantColor":"#aabbcc","##
        + #""original":{"__type":"File","name":"abc.jpg","url":"https://photos.example/bucket/originals/abc.jpg"},"#
        + #""thumbnail":{"__type":"File","name":"AbCdEf1234.jpg","url":"https://photos.example/bucket/thumbnails/AbCdEf1234.jpg"},"#
        + #""thumbnailWidth":400,"thumbnailHeight":300}"#

    @Test func encoder_WritesAPhotoRow_AsExactParseJSON() throws {
        let bytes = try encoder.object(Self.photoRow, projection: .all(.photo))
        #expect(String(decoding: bytes, as: UTF8.self) == Self.photoJSON)
        #expect((try? JSONSerialization.jsonObject(with: Data(bytes))) != nil)
    }

    @Test func encoder_WritesFindResponse_WithCount() throws {
        let query = try ParseQuery.find(.photo, items: [(name: "keys", value: "title,deletedAt")])
        let row = DictionaryRow([
            "object_id": "a", "created_at": isoDate("1970-01-01T00:00:00Z"),
            "updated_at": isoDate("2000-02-29T12:00:00.5Z"),
            "title": "", "deleted_at": isoDate("2024-01-01T00:00:00Z"),
        ])
        let bytes = try encoder.findResponse([row, row], projection: query.projection, count: 42)
        let one =
            #"{"objectId":"a","createdAt":"1970-01-01T00:00:00.000Z","updatedAt":"2000-02-29T12:00:00.500Z","title":"","#
            + #""deletedAt":{"__type":"Date","iso":"2024-01-01T00:00:00.000Z"}}"#
        #expect(String(decoding: bytes, as: UTF8.self) == #"{"results":["# + one + "," + one + #"],"count":42}"#)
        let empty = try encoder.findResponse([DictionaryRow](), projection: query.projection)
        #expect(String(decoding: empty, as: UTF8.self) == #"{"results":[]}"#)
    }

    @Test func encoder_WritesPointers_AndIncludedObjects() throws {
        let plain = try ParseQuery.find(.galleryItem, items: [])
        let itemRow = DictionaryRow([
            "object_id": "I1", "created_at": isoDate("2024-01-01T00:00:00Z"),
            "updated_at": isoDate("2024-01-01T00:00:00Z"),
            "gallery_id": "G1", "photo_id": "P1", "position": 0,
            "p__object_id": "P1", "p__created_at": isoDate("2024-01-01T00:00:00Z"),
            "p__updated_at": isoDate("2024-01-02T00:00:00Z"),
            "p__title": "t", "p__thumbnail_key": "thumbnails/P1.jpg",
        ])
        let head = #"{"objectId":"I1","createdAt":"2024-01-01T00:00:00.000Z","updatedAt":"2024-01-01T00:00:00.000Z","#
        #expect(
            String(decoding: try encoder.object(itemRow, projection: plain.projection), as: UTF8.self)
                == head + #""gallery":{"__type":"Pointer","className":"Gallery","objectId":"G1"},"#
                + #""photo":{"__type":"Pointer","className":"Photo","objectId":"P1"},"position":0}"#)
        let included = try ParseQuery.find(
            .galleryItem,
            items: [(name: "include", value: "photo"), (name: "keys", value: "photo.title,photo.thumbnail")])
        #expect(
            String(decoding: try encoder.object(itemRow, projection: included.projection), as: UTF8.self)
                == head
                + #""photo":{"__type":"Object","className":"Photo","objectId":"P1","createdAt":"2024-01-01T00:00:00.000Z","#
                + #""updatedAt":"2024-01-02T00:00:00.000Z","title":"t","#
                + #""thumbnail":{"__type":"File","name":"P1.jpg","url":"https://photos.example/bucket/thumbnails/P1.jpg"}}}"#
        )
    }

    @Test func encoder_LeavesOutAMissingCoverPhoto_AndWritesScore() throws {
        let query = try ParseQuery.find(
            .gallery, items: [(name: "include", value: "coverPhoto"), (name: "keys", value: "name")])
        let row = DictionaryRow([
            "object_id": "G1", "created_at": isoDate("2024-01-01T00:00:00Z"),
            "updated_at": isoDate("2024-01-01T00:00:00Z"), "name": "Trip",
        ])
        #expect(
            String(decoding: try encoder.object(row, projection: query.projection), as: UTF8.self)
                == #"{"objectId":"G1","createdAt":"2024-01-01T00:00:00.000Z","updatedAt":"2024-01-01T00:00:00.000Z","name":"Trip"}"#
        )
        let scored = try ParseQuery.find(
            .photo,
            items: [
                (name: "where", value: #"{"title":{"$text":{"$search":{"$term":"a"}}}}"#),
                (name: "order", value: "$score"),
                (name: "keys", value: "objectId"),
            ])
        let scoredRow = DictionaryRow([
            "object_id": "P1", "created_at": isoDate("2024-01-01T00:00:00Z"),
            "updated_at": isoDate("2024-01-01T00:00:00Z"), "score": 0.25,
        ])
        #expect(
            String(decoding: try encoder.object(scoredRow, projection: scored.projection), as: UTF8.self).hasSuffix(
                #","score":0.25}"#))
    }

    @Test func encoder_PercentEncodesUnusualKeyBytes_InURLs() {
        #expect(encoder.url(forKey: "originals/a b#?.jpg") == "https://photos.example/bucket/originals/a%20b%23%3F.jpg")
        #expect(encoder.url(forKey: "previews/P1.jpg") == "https://photos.example/bucket/previews/P1.jpg")
    }
}
