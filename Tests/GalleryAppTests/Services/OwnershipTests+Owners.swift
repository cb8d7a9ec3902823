import Foundation
import Testing

@testable import GalleryApp

/// Who owns what: the upgrade and `users create --admin` give ownerless rows to the first admin, an owner
/// is deleted only once empty, and the same uploaded bytes are one photo per owner.
extension OwnershipTests {
    @Test func upgrade_GivesOwnerlessRowsToTheFirstAdmin() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        // Rows of a single-tenant install (made before accounts): ownerless. The app id alone reads
        // none of them, even with no account; the master key reads them all.
        let legacy = try server.insertPhotos(3, owner: nil)
        let legacyGallery = try server.createGallery("Before accounts")
        _ = try server.addedItem(gallery: legacyGallery, photo: legacy[0])
        #expect(F.ids(try F.find(server, anonymous: true)).isEmpty)
        #expect(try count(server, "Photo", [:], anonymous: true) == 0)
        #expect(Set(F.ids(try F.find(server))) == Set(legacy))
        #expect(try count(server, "Photo", [:]) == 3)

        // A first (non-admin) account: ownerless rows stay unassigned, and are not the user's.
        let user = try server.makeUser("user")
        #expect(try OwnershipRepository(pool: server.application.pool).assignOwnerlessRowsToFirstAdmin().adminId == nil)
        #expect(F.ids(try F.find(server, [:], headers: user.headers)).isEmpty)

        let admin = try server.makeUser("admin", admin: true)
        _ = try server.makeUser("second-admin", admin: true)
        // What `galleryd users create --admin` calls; `migrate` and `serve` run it too.
        let assigned = try OwnershipRepository(pool: server.application.pool).assignOwnerlessRowsToFirstAdmin()
        #expect(assigned == .init(adminId: admin.objectId, photos: 3, galleries: 1, galleryItems: 1))
        #expect(Set(F.ids(try F.find(server, [:], headers: admin.headers))) == Set(legacy))
        #expect(try count(server, "Photo", admin.headers) == 3, "the admin's counter was recounted")
        #expect(
            try server.request("GET", "/parse/classes/Gallery/\(legacyGallery)", headers: admin.headers).status == 200)
        #expect(try server.application.migrate().isEmpty)
        #expect(try OwnershipRepository(pool: server.application.pool).assignOwnerlessRowsToFirstAdmin().isEmpty)
        // Counters follow trash and restore per owner.
        #expect(try server.request("DELETE", "/parse/classes/Photo/\(legacy[0])", headers: admin.headers).status == 200)
        #expect(try count(server, "Photo", admin.headers) == 2)
        #expect(
            try server.json(
                "PUT", "/parse/classes/Photo/\(legacy[0])", ["deletedAt": ["__op": "Delete"]], headers: admin.headers
            ).status == 200)
        #expect(try count(server, "Photo", admin.headers) == 3)
        // An owner never changes, even in SQL.
        #expect(throws: (any Error).self) {
            try server.application.pool.query(
                "update photos set owner_id = $1 where object_id = $2", [user.objectId, legacy[1]])
        }
    }

    @Test func usersCreateAdmin_TakesTheOwnerlessRows_AndAnOwnerIsDeletedOnlyOnceEmpty() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let legacy = try server.insertPhotos(2, owner: nil)
        let legacyGallery = try server.createGallery("Before accounts")
        let url = server.application.configuration.databaseURL
        let created = try GalleryCommandRun.galleryd(
            ["users", "create", "boss", "--admin", "--password-stdin"], databaseURL: url,
            stdin: "a long enough password\n")
        #expect(created.status == 0, "\(created.error)")
        #expect(
            created.output.contains(
                "gave 2 photo(s), 1 gallery(ies) and 0 item(s) without an owner to the first admin"),
            "\(created.output)")
        let boss = try #require(
            try server.application.pool.query("select object_id from users where username = 'boss'").first?
                .decode(String.self, 0))
        let owners = try server.application.pool.query("select distinct owner_id from photos").map {
            try $0.decode(String?.self, 0)
        }
        #expect(owners == [boss])
        // A second admin takes nothing (nothing is ownerless any more).
        let second = try GalleryCommandRun.galleryd(
            ["users", "create", "deputy", "--admin", "--password-stdin"], databaseURL: url,
            stdin: "another long password\n")
        #expect(second.status == 0 && !second.output.contains("gave"), "\(second.output)")

        // RESTRICT: an owner of photos is deleted only after they are purged.
        let refused = try server.request("DELETE", "/parse/users/\(boss)", headers: Self.master)
        #expect(refused.status == 400 && F.code(refused) == 119, "\(refused.text)")
        #expect((refused.json["error"] as? String)?.contains("purge them first") == true)
        for photo in legacy {
            #expect(try server.request("DELETE", "/parse/classes/Photo/\(photo)", headers: Self.master).status == 200)
        }
        #expect(
            try server.request("DELETE", "/parse/classes/Gallery/\(legacyGallery)", headers: Self.master).status == 200)
        #expect(try server.request("DELETE", "/parse/purge/Photo", headers: Self.master).status == 200)
        #expect(try server.request("DELETE", "/parse/purge/Gallery", headers: Self.master).status == 200)
        let deleted = try server.request("DELETE", "/parse/users/\(boss)", headers: Self.master)
        #expect(deleted.status == 200, "\(deleted.text)")
    }

    @Test func uploads_AreTheUploadersOwn_SameBytesAreOnePhotoPerOwner() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let a = try server.makeUser("alice")
        let b = try server.makeUser("bob")
        let jpeg = try TestJPEG.make(width: 64, height: 48, seed: 9)
        func upload(_ user: TestUser) throws -> TestServer.Response {
            let file = try server.request(
                "POST", "/parse/files/p.jpg", body: Data(jpeg),
                headers: user.headers.merging(["Content-Type": "image/jpeg"]) { $1 })
            let name = try #require(file.json["name"] as? String, "\(file.text)")
            return try create(server, "Photo", ["original": ["__type": "File", "name": name]], user)
        }
        let first = try upload(a)
        #expect(first.status == 201)
        #expect(
            try upload(a).json["objectId"] as? String == first.json["objectId"] as? String,
            "the same bytes again: the same photo")
        let other = try upload(b)
        #expect(other.status == 201 && other.json["objectId"] as? String != first.json["objectId"] as? String)
        #expect(F.ids(try F.find(server, [:], headers: b.headers)) == [try createdId(other)])
        // Purging B's copy keeps A's original.
        #expect(
            try server.request("DELETE", "/parse/classes/Photo/\(try createdId(other))", headers: b.headers).status
                == 200)
        #expect(
            try server.request("DELETE", "/parse/purge/Photo/\(try createdId(other))", headers: b.headers).status == 200
        )
        let kept = try server.request("GET", "/parse/classes/Photo/\(try createdId(first))", headers: a.headers)
        let url = try #require((kept.json["original"] as? [String: Any])?["url"] as? String)
        #expect(try server.request("GET", String(url.dropFirst(server.baseURL.count)), appID: nil).status == 200)
    }
}
