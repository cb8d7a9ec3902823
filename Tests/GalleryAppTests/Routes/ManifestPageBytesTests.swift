import Foundation
import Testing

@testable import GalleryApp

/// A whole page of photos, byte for byte, as the database path writes it (text lent from the
/// result, integers and timestamps copied as PostgreSQL wrote them): the answer a faster writer
/// must not change by one byte.
@Suite struct ManifestPageBytesTests {
    typealias F = ManifestFixtures

    @Test func find_WritesAPageOfEveryKindOfField_ByteForByte() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        try F.insert(
            server,
            [
                F.Row(
                    id: "pin0000001", createdAt: Date(timeIntervalSince1970: 1_700_000_000.123),
                    title: "quote \" back \\ nl \n ctl \u{01} é 🌅", tags: ["sea", "x \"y\" z", "é"], width: 4032,
                    height: 3024, byteSize: 123_456_789_012),
                F.Row(
                    id: "pin0000002", createdAt: Date(timeIntervalSince1970: 1_699_999_998.5), filename: "DSC 2.jpg",
                    width: 1, height: 3, dominantColor: nil),
                F.Row(
                    id: "pin0000003", createdAt: Date(timeIntervalSince1970: -2_208_988_800), tags: ["only"],
                    width: 3, height: 2, byteSize: 0),
            ])
        // Each update sets updated_at itself, or the trigger would set it to now().
        let pool = server.application.pool
        try pool.query(
            """
            update photos set taken_at = '1969-12-31 23:59:59.9995+00', updated_at = '2024-03-01 00:00:00.001+00'
                where object_id = 'pin0000001'
            """)
        try pool.query(
            """
            update photos set taken_at = '2024-02-29 12:34:56.789+00', updated_at = '2024-03-01 00:00:00+00',
                acl = '{"*":{"read":true},"role:Editors":{"write":true}}', thumbnail_key = 'thumbnails/a b%c.jpg'
                where object_id = 'pin0000003'
            """)
        let page = try F.find(server, ["order": "-createdAt", "limit": "20", "count": "1"])
        #expect(page.status == 200)
        #expect(page.text == Self.expectedPage)
    }

    static let expectedPage = [
        ##"{"results":[{"objectId":"pin0000001","createdAt":"2023-11-14T22:13:20.123Z","##,
        ##""updatedAt":"2024-03-01T00:00:00.001Z","filename":"IMG_0001.jpg","##,
        ##""title":"quote \" back \\ nl \n ctl \u0001 é 🌅","tags":["sea","x \"y\" z","é"],"##,
        ##""contentType":"image/jpeg","byteSize":123456789012,"##,
        ##""checksum":"731ebe566c09fe71d834483d76773386b5ee4286dfb0f64cd99f8b8075078987","width":4032,"##,
        ##""height":3024,"aspectRatio":1.3333333333333333,"takenAt":{"__type":"Date","##,
        ##""iso":"1969-12-31T23:59:59.999Z"},"status":"ready","dominantColor":"#336699","##,
        ##""original":{"__type":"File","##,
        ##""name":"731ebe566c09fe71d834483d76773386b5ee4286dfb0f64cd99f8b8075078987.jpg","##,
        ##""url":"http://localhost:0/bucket/originals/731ebe566c09fe71d834483d76773386b5ee4286dfb0f64cd99f8b8075078987.jpg"},"##,
        ##""thumbnail":{"__type":"File","name":"pin0000001.jpg","##,
        ##""url":"http://localhost:0/bucket/thumbnails/pin0000001.jpg"},"preview":{"__type":"File","##,
        ##""name":"pin0000001.jpg","url":"http://localhost:0/bucket/previews/pin0000001.jpg"},"##,
        ##""thumbnailWidth":400,"thumbnailHeight":300,"previewWidth":2048,"previewHeight":1536,"ACL":{}},"##,
        ##"{"objectId":"pin0000002","createdAt":"2023-11-14T22:13:18.500Z","##,
        ##""updatedAt":"2023-11-14T22:13:18.500Z","filename":"DSC 2.jpg","title":"","tags":[],"##,
        ##""contentType":"image/jpeg","byteSize":1000,"##,
        ##""checksum":"941247c11f086f28b2274fed57ee5681a367a52ecba7e875eb5e969f7a984599","width":1,"##,
        ##""height":3,"aspectRatio":0.3333333333333333,"status":"ready","original":{"__type":"File","##,
        ##""name":"941247c11f086f28b2274fed57ee5681a367a52ecba7e875eb5e969f7a984599.jpg","##,
        ##""url":"http://localhost:0/bucket/originals/941247c11f086f28b2274fed57ee5681a367a52ecba7e875eb5e969f7a984599.jpg"},"##,
        ##""thumbnail":{"__type":"File","name":"pin0000002.jpg","##,
        ##""url":"http://localhost:0/bucket/thumbnails/pin0000002.jpg"},"preview":{"__type":"File","##,
        ##""name":"pin0000002.jpg","url":"http://localhost:0/bucket/previews/pin0000002.jpg"},"##,
        ##""thumbnailWidth":400,"thumbnailHeight":300,"previewWidth":2048,"previewHeight":1536,"ACL":{}},"##,
        ##"{"objectId":"pin0000003","createdAt":"1900-01-01T00:00:00.000Z","##,
        ##""updatedAt":"2024-03-01T00:00:00.000Z","filename":"IMG_0001.jpg","title":"","tags":["only"],"##,
        ##""contentType":"image/jpeg","byteSize":0,"##,
        ##""checksum":"cbb13a211a506af26a341a9245e9ba138a572d93a8ad1de78fd1cdaa4ca8e987","width":3,"##,
        ##""height":2,"aspectRatio":1.5,"takenAt":{"__type":"Date","iso":"2024-02-29T12:34:56.789Z"},"##,
        ##""status":"ready","dominantColor":"#336699","original":{"__type":"File","##,
        ##""name":"cbb13a211a506af26a341a9245e9ba138a572d93a8ad1de78fd1cdaa4ca8e987.jpg","##,
        ##""url":"http://localhost:0/bucket/originals/cbb13a211a506af26a341a9245e9ba138a572d93a8ad1de78fd1cdaa4ca8e987.jpg"},"##,
        ##""thumbnail":{"__type":"File","name":"a b%c.jpg","##,
        ##""url":"http://localhost:0/bucket/thumbnails/a%20b%25c.jpg"},"preview":{"__type":"File","##,
        ##""name":"pin0000003.jpg","url":"http://localhost:0/bucket/previews/pin0000003.jpg"},"##,
        ##""thumbnailWidth":400,"thumbnailHeight":300,"previewWidth":2048,"previewHeight":1536,"##,
        ##""ACL":{"*": {"read": true}, "role:Editors": {"write": true}}}],"count":3}"##,
    ].joined()
}
