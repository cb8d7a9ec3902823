import Foundation
import Testing

@testable import GalleryApp

/// A row the server cannot decode is a server error the operator can find by its request id, not
/// a record that quietly leaves the field out and still answers 200.
@Suite(.serialized) struct RowDecodingTests {
    @Test func photoWithANullTag_Is500WithTheRequestId_NotARecordWithoutTags() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let ids = try server.insertPhotos(2)
        try server.application.pool.query("update photos set tags = array['sea', null] where object_id = $1", [ids[0]])

        let single = try server.request("GET", "/parse/classes/Photo/\(ids[0])")
        #expect(single.status == 500)
        #expect(single.json["code"] as? Int == 1)
        let requestId = try #require(single.header("X-Request-Id"))
        #expect((single.json["error"] as? String)?.contains(requestId) == true)

        let page = try server.request("GET", "/parse/classes/Photo?limit=10")
        #expect(page.status == 500)
        #expect(page.json["code"] as? Int == 1)

        // The other photo, and the server, are fine.
        let other = try server.request("GET", "/parse/classes/Photo/\(ids[1])")
        #expect(other.status == 200)
        #expect(other.json["tags"] as? [String] == [])
    }

    @Test func photoWithNullableFieldsUnset_LeavesThemOut() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let ids = try server.insertPhotos(1)
        let photo = try server.request("GET", "/parse/classes/Photo/\(ids[0])")
        #expect(photo.status == 200)
        #expect(photo.json["takenAt"] == nil)
        #expect(photo.json["objectId"] as? String == ids[0])
    }
}
