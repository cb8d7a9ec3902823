import Foundation
import Testing

@testable import GalleryApp

/// POST/PUT bodies: writability, types and validation.
@Suite struct ParseWriteBodyTests {
    private func parse(_ json: String, _ schema: ParseClassSchema, _ mode: ParseWriteBody.Mode) throws -> ParseWriteBody
    {
        try ParseWriteBody.parse(Array(json.utf8), schema: schema, mode: mode)
    }

    @Test func body_ParsesPhotoUpdate_TitleAndTags() throws {
        let body = try parse(#"{"title":"Beach","tags":["sea","sun","sea"]}"#, .photo, .update)
        #expect(
            body.assignments == [
                .init(field: "title", value: .string("Beach")),
                .init(field: "tags", value: .stringArray(["sea", "sun"])),
            ])
        #expect(!body.restores)
    }

    @Test func body_ParsesPhotoCreate_FromAnUploadedFile() throws {
        let body = try parse(
            #"{"original":{"__type":"File","name":"abc.jpg","url":"http://x/abc.jpg"},"title":"t"}"#, .photo, .create)
        #expect(body["original"] == .file("abc.jpg"))
        #expect(parseErrorCode { _ = try parse(#"{"title":"t"}"#, .photo, .create) } == 142)
        #expect(
            parseErrorCode { _ = try parse(#"{"original":{"__type":"File","name":"../etc/passwd"}}"#, .photo, .create) }
                == 142)
        #expect(parseErrorCode { _ = try parse(#"{"original":"abc.jpg"}"#, .photo, .create) } == 111)
        // On update the file comes back from a fetched object: compared, not written.
        #expect(
            try parse(#"{"original":{"__type":"File","name":"a.jpg"}}"#, .photo, .update).expectations == [
                .init(field: "original", value: .text("a.jpg"))
            ])
    }

    @Test func body_RestoresFromTrash_WithDeleteOpOnDeletedAt() throws {
        #expect(try parse(#"{"deletedAt":{"__op":"Delete"}}"#, .photo, .update).restores)
        #expect(try parse(#"{"deletedAt":{"__op":"Delete"}}"#, .gallery, .update).restores)
        #expect(
            parseErrorCode {
                _ = try parse(#"{"deletedAt":{"__type":"Date","iso":"2024-01-01T00:00:00Z"}}"#, .photo, .update)
            } == 111)
        #expect(parseErrorCode { _ = try parse(#"{"deletedAt":null}"#, .photo, .update) } == 111)
        #expect(parseErrorCode { _ = try parse(#"{"deletedAt":{"__op":"Delete"}}"#, .photo, .create) } == 111)
        #expect(parseErrorCode { _ = try parse(#"{"title":{"__op":"Delete"}}"#, .photo, .update) } == 111)
        #expect(parseErrorCode { _ = try parse(#"{"width":{"__op":"Increment","amount":1}}"#, .photo, .update) } == 105)
    }

    @Test func body_RejectsUnknownAndReadOnlyFields_With105() {
        for json in [#"{"foo":1}"#, #"{"objectId":"x"}"#, #"{"createdAt":"x"}"#, #"{"width":"10"}"#, #"{"status":5}"#] {
            #expect(parseErrorCode { _ = try parse(json, .photo, .update) } == 105, "\(json)")
        }
        for json in [#"{"width":10}"#, #"{"status":"ready"}"#] {
            #expect(parseErrorCode { _ = try parse(json, .photo, .create) } == 105, "\(json)")
        }
        #expect(parseErrorCode { _ = try parse(#"{"photoCount":"3"}"#, .gallery, .update) } == 105)
        #expect(
            parseErrorCode {
                _ = try parse(
                    #"{"gallery":{"__type":"Pointer","className":"Photo","objectId":"G1"}}"#, .galleryItem, .update)
            } == 105)
        #expect(
            parseErrorMessage { _ = try parse(#"{"objectId":"x"}"#, .photo, .update) }
                == "objectId is an invalid field name.")
    }

    @Test func body_ReadOnlyFieldsSentBackOnUpdate_AreExpectations() throws {
        let photo = try parse(
            #"{"width":10,"aspectRatio":2,"status":"ready","error":null,"takenAt":{"__type":"Date","iso":"2020-09-13T12:26:40.123Z"},"thumbnail":{"__type":"File","name":"t.jpg","url":"http://x/t.jpg"},"title":"New"}"#,
            .photo, .update)
        #expect(photo.assignments == [.init(field: "title", value: .string("New"))])
        #expect(
            photo.expectations == [
                .init(field: "width", value: .int(10)), .init(field: "aspectRatio", value: .double(2)),
                .init(field: "status", value: .text("ready")), .init(field: "error", value: .null),
                .init(field: "takenAt", value: .timestamp(Date(timeIntervalSince1970: 1_600_000_000.123))),
                .init(field: "thumbnail", value: .text("t.jpg")),
            ])
        #expect(
            try parse(#"{"photoCount":3}"#, .gallery, .update).expectations == [
                .init(field: "photoCount", value: .int(3))
            ])
        let item = try parse(
            #"{"gallery":{"__type":"Pointer","className":"Gallery","objectId":"G1"},"position":1}"#, .galleryItem,
            .update)
        #expect(item.expectations == [.init(field: "gallery", value: .text("G1"))])
        #expect(item["position"] == .int(1))
        let included = try parse(
            #"{"coverPhoto":{"__type":"Object","className":"Photo","objectId":"P1","width":4}}"#, .gallery, .update)
        #expect(included.expectations == [.init(field: "coverPhoto", value: .text("P1"))])
    }

    @Test func body_ParsesArrayOperations_OnTags() throws {
        #expect(
            try parse(#"{"tags":{"__op":"AddUnique","objects":["a","b","a"]}}"#, .photo, .update)["tags"]
                == .arrayOperation(.addUnique, ["a", "b"]))
        #expect(
            try parse(#"{"tags":{"__op":"Add","objects":["a"]}}"#, .photo, .update)["tags"]
                == .arrayOperation(.addUnique, ["a"]))
        #expect(
            try parse(#"{"tags":{"__op":"Remove","objects":["a"]}}"#, .photo, .update)["tags"]
                == .arrayOperation(.remove, ["a"]))
        #expect(
            try parse(
                #"{"original":{"__type":"File","name":"a.jpg"},"tags":{"__op":"Add","objects":["a"]}}"#, .photo, .create
            )["tags"] == .stringArray(["a"]))
        #expect(
            try parse(
                #"{"original":{"__type":"File","name":"a.jpg"},"tags":{"__op":"Remove","objects":["a"]}}"#, .photo,
                .create)["tags"] == .stringArray([]))
        #expect(parseErrorCode { _ = try parse(#"{"tags":{"__op":"Increment","amount":1}}"#, .photo, .update) } == 111)
        #expect(parseErrorCode { _ = try parse(#"{"tags":{"__op":"Add","objects":[""]}}"#, .photo, .update) } == 142)
        #expect(parseErrorCode { _ = try parse(#"{"tags":{"__op":"Add"}}"#, .photo, .update) } == 107)
        #expect(parseErrorCode { _ = try parse(#"{"title":{"__op":"Add","objects":["a"]}}"#, .photo, .update) } == 111)
    }

    @Test func body_RejectsWrongTypes_With111() {
        for json in [#"{"title":5}"#, #"{"title":null}"#, #"{"tags":"a"}"#, #"{"tags":[1]}"#, #"{"title":["a"]}"#] {
            #expect(parseErrorCode { _ = try parse(json, .photo, .update) } == 111, "\(json)")
        }
        #expect(parseErrorCode { _ = try parse(#"{"position":"1"}"#, .galleryItem, .update) } == 111)
        #expect(parseErrorCode { _ = try parse(#"{"position":1.5}"#, .galleryItem, .update) } == 111)
        #expect(
            parseErrorMessage { _ = try parse(#"{"title":5}"#, .photo, .update) }
                == "schema mismatch for Photo.title; expected String but got Number")
    }

    @Test func body_ValidatesGalleryName_AfterTrimming() throws {
        #expect(try parse(#"{"name":"  Summer 2024 \n"}"#, .gallery, .create)["name"] == .string("Summer 2024"))
        #expect(try parse(#"{"name":"\#(String(repeating: "é", count: 200))"}"#, .gallery, .update)["name"] != nil)
        #expect(parseErrorCode { _ = try parse(#"{"name":"   "}"#, .gallery, .create) } == 142)
        #expect(
            parseErrorCode { _ = try parse(#"{"name":"\#(String(repeating: "a", count: 201))"}"#, .gallery, .create) }
                == 142)
        #expect(parseErrorCode { _ = try parse(#"{"name":5}"#, .gallery, .create) } == 111)
        #expect(parseErrorCode { _ = try parse("{}", .gallery, .create) } == 142)
        #expect(
            parseErrorCode {
                _ = try ParseWriteBody.parse(
                    [0x7B, 0x22, 0x6E, 0x22, 0x3A, 0x22, 0xFF, 0x22, 0x7D], schema: .gallery, mode: .create)
            } == 107)
    }

    @Test func body_ParsesGalleryItemCreate_WithPointers() throws {
        let body = try parse(
            #"{"gallery":{"__type":"Pointer","className":"Gallery","objectId":"G123456789"},"photo":{"__type":"Pointer","className":"Photo","objectId":"P123456789"},"position":2}"#,
            .galleryItem, .create)
        #expect(body.assignments.map(\.value) == [.pointer("G123456789"), .pointer("P123456789"), .int(2)])
        #expect(
            parseErrorCode {
                _ = try parse(
                    #"{"gallery":{"__type":"Pointer","className":"Photo","objectId":"G1"},"photo":{"__type":"Pointer","className":"Photo","objectId":"P1"}}"#,
                    .galleryItem, .create)
            } == 111)
        #expect(
            parseErrorCode {
                _ = try parse(
                    #"{"gallery":{"__type":"Pointer","className":"Gallery","objectId":"x'; --"},"photo":{"__type":"Pointer","className":"Photo","objectId":"P1"}}"#,
                    .galleryItem, .create)
            } == 106)
        #expect(parseErrorCode { _ = try parse(#"{"position":-1}"#, .galleryItem, .update) } == 142)
        #expect(try parse(#"{"position":3.0}"#, .galleryItem, .update)["position"] == .int(3))
    }

    @Test func body_RejectsMalformedBodies() {
        #expect(parseErrorCode { _ = try parse("[]", .photo, .update) } == 107)
        #expect(parseErrorCode { _ = try parse("{", .photo, .update) } == 107)
        #expect(parseErrorCode { _ = try parse(#"{"title":"a","title":"b"}"#, .photo, .update) } == 107)
        #expect(parseErrorCode { _ = try parse(String(repeating: "[", count: 1000), .photo, .update) } == 102)
        var limits = ParseLimits()
        limits.maxBodyBytes = 10
        #expect(
            parseErrorCode {
                _ = try ParseWriteBody.parse(
                    Array(#"{"title":"abcdefgh"}"#.utf8), schema: .photo, mode: .update, limits: limits)
            } == 107)
        #expect(parseErrorCode { _ = try parse(#"{"tags":["a",""]}"#, .photo, .update) } == 142)
        #expect(
            parseErrorCode {
                _ = try parse(
                    #"{"tags":[\#(Array(repeating: "\"t\"", count: 101).joined(separator: ","))]}"#, .photo, .update)
            } == 142)
    }
}

/// The UPDATE statement built from a PUT body.
@Suite struct ParseUpdateStatementTests {
    @Test func update_SetsWritableColumns_AndRestores() throws {
        let body = try ParseWriteBody.parse(
            Array(#"{"title":"x'y","tags":["a"],"deletedAt":{"__op":"Delete"}}"#.utf8), schema: .photo, mode: .update)
        #expect(
            ParseSQLCompiler.update(body, objectId: "P1")
                == ParseSQLStatement(
                    sql:
                        "update photos set title = $1::text, tags = $2::text[], deleted_at = null, updated_at = date_trunc('milliseconds', now())"
                        + " where object_id = $3::text returning updated_at",
                    binds: [.text("x'y"), .textArray(["a"]), .text("P1")]))
    }

    @Test func update_LeavesPositionToTheReorderService() throws {
        let body = try ParseWriteBody.parse(Array(#"{"position":2}"#.utf8), schema: .galleryItem, mode: .update)
        #expect(ParseSQLCompiler.update(body, objectId: "I1") == nil)
        let empty = try ParseWriteBody.parse(Array("{}".utf8), schema: .gallery, mode: .update)
        #expect(ParseSQLCompiler.update(empty, objectId: "G1") == nil)
    }
}
