import Foundation
import Testing

@testable import GalleryApp

/// Objects reached through `include` carry their class's fields of an app's own (issue 27,
/// docs/decisions/045): a GalleryItem's joined `photo`, a Gallery's `coverPhoto`, a Photo's
/// fetched `owner` (`_User`), each less the fields its class's `protectedFields` hide from the
/// caller (a `_User` shown whole to the account itself), as a get of it would be.
@Suite struct AppFieldIncludeTests {
    private typealias F = ManifestFixtures

    private func find(
        _ server: TestServer, _ className: String, _ items: [String: String], as user: TestUser? = nil
    ) throws -> [[String: Any]] {
        let response = try server.request(
            "GET", "/parse/classes/\(className)?" + F.query(items), headers: user?.headers ?? [:])
        #expect(response.status == 200, "\(className) \(items): \(response.text)")
        return F.results(response)
    }

    @Test func includedObjects_CarryTheTargetsAppFields_LessItsProtectedOnes() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let alice = try server.makeUser("alice")
        let bob = try server.makeUser("bob")
        #expect(
            try server.json("PUT", "/parse/schemas/Photo", ["fields": ["rating": ["type": "Number"]]]).status == 200)
        let userFields = try server.json(
            "PUT", "/parse/schemas/_User",
            ["fields": ["displayName": ["type": "String"], "phone": ["type": "String"]]])
        #expect(userFields.status == 200, "\(userFields.text)")
        let named = try server.json(
            "PUT", "/parse/users/\(alice.objectId)", ["displayName": "Alice", "phone": "555-1"],
            headers: ["X-Parse-Master-Key": TestServer.masterKey])
        #expect(named.status == 200, "\(named.text)")
        let photo = try server.insertPhotos(1, owner: alice.objectId)[0]
        #expect(
            try server.json(
                "PUT", "/parse/classes/Photo/\(photo)", ["rating": 4, "ACL": ["*": ["read": true]]]
            ).status == 200)
        let gallery = try #require(
            try server.json("POST", "/parse/classes/Gallery", ["name": "g"], headers: alice.headers)
                .json["objectId"] as? String)
        let added = try server.json(
            "POST", "/parse/classes/GalleryItem",
            ["gallery": TestServer.pointer("Gallery", gallery), "photo": TestServer.pointer("Photo", photo)],
            headers: alice.headers)
        let item = try #require(added.json["objectId"] as? String, "\(added.text)")

        // Joined includes (the item's photo, the gallery's cover) and a fetched one (the owner).
        let items = try find(server, "GalleryItem", ["include": "photo"], as: alice)
        #expect((items.first?["photo"] as? [String: Any])?["rating"] as? Double == 4, "\(items)")
        let got = try server.request("GET", "/parse/classes/GalleryItem/\(item)?include=photo", headers: alice.headers)
        #expect((got.json["photo"] as? [String: Any])?["rating"] as? Double == 4, "\(got.text)")
        let keyed = try find(server, "GalleryItem", ["keys": "photo.rating"], as: alice)
        let keyedPhoto = keyed.first?["photo"] as? [String: Any]
        #expect(keyedPhoto?["rating"] as? Double == 4 && keyedPhoto?["filename"] == nil, "\(keyed)")
        let galleries = try find(server, "Gallery", ["include": "coverPhoto"], as: alice)
        #expect((galleries.first?["coverPhoto"] as? [String: Any])?["rating"] as? Double == 4, "\(galleries)")
        let owned = try find(server, "Photo", ["include": "owner"], as: bob)
        let owner = owned.first?["owner"] as? [String: Any]
        #expect(owner?["displayName"] as? String == "Alice" && owner?["phone"] as? String == "555-1", "\(owned)")

        // Protected: left out of every included object, but a user's own account is theirs whole.
        for (className, hidden) in [("Photo", "rating"), ("_User", "phone")] {
            let put = try server.json(
                "PUT", "/parse/schemas/\(className)", ["classLevelPermissions": ["protectedFields": ["*": [hidden]]]])
            #expect(put.status == 200, "\(put.text)")
        }
        let hiddenItems = try find(server, "GalleryItem", ["include": "photo"], as: alice)
        let hiddenPhoto = hiddenItems.first?["photo"] as? [String: Any]
        #expect(hiddenPhoto?["rating"] == nil && hiddenPhoto?["objectId"] as? String == photo, "\(hiddenItems)")
        let hiddenCover = try find(server, "Gallery", ["include": "coverPhoto"], as: alice)
        #expect((hiddenCover.first?["coverPhoto"] as? [String: Any])?["rating"] == nil, "\(hiddenCover)")
        let othersOwner = try find(server, "Photo", ["include": "owner"], as: bob).first?["owner"] as? [String: Any]
        #expect(
            othersOwner?["displayName"] as? String == "Alice" && othersOwner?["phone"] == nil, "\(othersOwner ?? [:])")
        let ownOwner = try find(server, "Photo", ["include": "owner"], as: alice).first?["owner"] as? [String: Any]
        #expect(ownOwner?["phone"] as? String == "555-1", "\(ownOwner ?? [:])")
        // The master key sees everything.
        let master = try find(server, "GalleryItem", ["include": "photo"])
        #expect((master.first?["photo"] as? [String: Any])?["rating"] as? Double == 4, "\(master)")
    }

    /// Alice, with one photo of hers in a gallery of hers (one GalleryItem).
    private func userWithOneItem(_ server: TestServer) throws -> TestUser {
        let alice = try server.makeUser("alice")
        let photo = try server.insertPhotos(1, owner: alice.objectId)[0]
        let gallery = try #require(
            try server.json("POST", "/parse/classes/Gallery", ["name": "g"], headers: alice.headers)
                .json["objectId"] as? String)
        _ = try server.json(
            "POST", "/parse/classes/GalleryItem",
            ["gallery": TestServer.pointer("Gallery", gallery), "photo": TestServer.pointer("Photo", photo)],
            headers: alice.headers)
        return alice
    }

    @Test func joinedInclude_NeedsTheTargetsGetPermission() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let alice = try userWithOneItem(server)
        let closed = try server.json(
            "PUT", "/parse/schemas/Photo", ["classLevelPermissions": ["get": [String: Bool]()]])
        #expect(closed.status == 200, "\(closed.text)")
        // As a get of the photo would be refused, so is its include (119); the items alone still answer.
        let refused = try server.request("GET", "/parse/classes/GalleryItem?include=photo", headers: alice.headers)
        #expect(refused.status == 400 && F.code(refused) == 119, "\(refused.text)")
        #expect(F.results(try server.request("GET", "/parse/classes/GalleryItem", headers: alice.headers)).count == 1)
    }

    @Test func anIncludesTag_MovesWhenTheIncludedClassesPermissionsChange() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let alice = try userWithOneItem(server)
        let path = "/parse/classes/GalleryItem?include=photo"
        let before = try server.settledETag { try server.request("GET", path, headers: alice.headers).header("ETag") }
        let revalidated = alice.headers.merging(["If-None-Match": before]) { $1 }
        #expect(try server.request("GET", path, headers: revalidated).status == 304)
        let hidden = try server.json(
            "PUT", "/parse/schemas/Photo", ["classLevelPermissions": ["protectedFields": ["*": ["title"]]]])
        #expect(hidden.status == 200, "\(hidden.text)")
        // The items did not change, but what their included photo shows did: a full answer, not 304.
        #expect(try server.request("GET", path, headers: revalidated).status == 200)
    }
}
