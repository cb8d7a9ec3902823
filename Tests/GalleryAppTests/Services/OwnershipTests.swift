import Foundation
import Testing

@testable import GalleryApp

/// Ownership and access (issue #15): a user reads and changes only their own photos and galleries
/// and what is shared with them, by every route; a shared gallery is readable through itself only;
/// the master key sees everything; no session reads nothing (or what is public with
/// `public_read`); the upgrade gives ownerless rows to the first admin.
struct OwnershipTests {
    private typealias F = ManifestFixtures

    private func create(_ server: TestServer, _ className: String, _ body: [String: Any], _ user: TestUser?) throws
        -> TestServer.Response
    {
        try create(server, className, body, user?.headers ?? [:])
    }

    private func create(_ server: TestServer, _ className: String, _ body: [String: Any], _ headers: [String: String])
        throws -> TestServer.Response
    {
        try server.json("POST", "/parse/classes/\(className)", body, headers: headers)
    }

    private func createdId(_ response: TestServer.Response) throws -> String {
        try #require(response.json["objectId"] as? String, "create failed: \(response.status) \(response.text)")
    }

    private func gallery(_ server: TestServer, _ name: String, acl: [String: Any]? = nil, _ user: TestUser) throws
        -> String
    {
        var body: [String: Any] = ["name": name]
        if let acl { body["ACL"] = acl }
        return try createdId(try create(server, "Gallery", body, user))
    }

    private func item(_ server: TestServer, gallery: String, photo: String, _ user: TestUser) throws
        -> TestServer.Response
    {
        try create(
            server, "GalleryItem",
            ["gallery": TestServer.pointer("Gallery", gallery), "photo": TestServer.pointer("Photo", photo)], user)
    }

    private func count(
        _ server: TestServer, _ className: String, _ headers: [String: String], where condition: [String: Any]? = nil,
        anonymous: Bool = false
    ) throws -> Int? {
        var items = ["count": "1", "limit": "0"]
        if let condition { items["where"] = F.json(condition) }
        return try F.find(server, items, className: className, headers: headers, anonymous: anonymous).json["count"]
            as? Int
    }

    private static let master = ["X-Parse-Master-Key": TestServer.masterKey]

    @Test func userA_CannotReadChangeDeleteOrCountUserBsPhotos_ByAnyRoute() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let a = try server.makeUser("alice")
        let b = try server.makeUser("bob")
        let photosA = try server.insertPhotos(3, owner: a.objectId)
        let photosB = try server.insertPhotos(2, owner: b.objectId)
        let galleryA = try gallery(server, "Alice's", a)
        _ = try createdId(try item(server, gallery: galleryA, photo: photosA[0], a))
        let photo = photosA[0]

        // find and count: only one's own photos; counts from the per-owner counter.
        #expect(Set(F.ids(try F.find(server, [:], headers: b.headers))) == Set(photosB))
        #expect(Set(F.ids(try F.find(server, [:], headers: a.headers))) == Set(photosA))
        #expect(try count(server, "Photo", a.headers) == 3)
        #expect(try count(server, "Photo", b.headers) == 2)
        #expect(try count(server, "Photo", b.headers, where: ["objectId": photo]) == 0)
        let byId = try F.find(server, ["where": F.json(["objectId": ["$in": photosA]])], headers: b.headers)
        #expect(F.ids(byId).isEmpty)
        #expect(try count(server, "Gallery", b.headers) == 0)
        #expect(try count(server, "GalleryItem", b.headers) == 0)
        // The master key sees all.
        #expect(try count(server, "Photo", Self.master) == 5)
        #expect(F.ids(try F.find(server, ["limit": "10"], headers: Self.master)).count == 5)

        // get, include: 101, never 403.
        for path in [
            "/parse/classes/Photo/\(photo)", "/parse/classes/Gallery/\(galleryA)",
            "/parse/classes/Gallery/\(galleryA)?include=coverPhoto",
        ] {
            let r = try server.request("GET", path, headers: b.headers)
            #expect(r.status == 404 && F.code(r) == 101, "\(path): \(r.status) \(r.text)")
        }
        let items = try F.find(
            server, ["where": F.json(["gallery": TestServer.pointer("Gallery", galleryA)]), "include": "photo"],
            className: "GalleryItem", headers: b.headers)
        #expect(items.status == 200 && F.results(items).isEmpty)
        // The owner's own get shows the owner pointer.
        let own = try server.request("GET", "/parse/classes/Photo/\(photo)", headers: a.headers)
        let owner = own.json["owner"] as? [String: Any]
        #expect(owner?["className"] as? String == "_User" && owner?["objectId"] as? String == a.objectId)

        // update, trash, restore, purge, item changes: 101 each, and nothing changed.
        let put = try server.json("PUT", "/parse/classes/Photo/\(photo)", ["title": "mine now"], headers: b.headers)
        #expect(put.status == 404 && F.code(put) == 101)
        let trash = try server.request("DELETE", "/parse/classes/Photo/\(photo)", headers: b.headers)
        #expect(trash.status == 404 && F.code(trash) == 101)
        let trashGallery = try server.request("DELETE", "/parse/classes/Gallery/\(galleryA)", headers: b.headers)
        #expect(F.code(trashGallery) == 101)
        #expect(try server.request("DELETE", "/parse/classes/Photo/\(photosA[1])", headers: a.headers).status == 200)
        let restore = try server.json(
            "PUT", "/parse/classes/Photo/\(photosA[1])", ["deletedAt": ["__op": "Delete"]], headers: b.headers)
        #expect(F.code(restore) == 101)
        let purge = try server.request("DELETE", "/parse/purge/Photo/\(photosA[1])", headers: b.headers)
        #expect(purge.status == 404 && F.code(purge) == 101)
        let purgeAll = try server.request("DELETE", "/parse/purge/Photo", headers: b.headers)
        #expect(purgeAll.status == 403)
        let intoA = try item(server, gallery: galleryA, photo: photosB[0], b)
        #expect(F.code(intoA) == 101, "\(intoA.text)")
        let stealPhoto = try item(server, gallery: try gallery(server, "Bob's", b), photo: photo, b)
        #expect(F.code(stealPhoto) == 101, "\(stealPhoto.text)")

        // _method overrides on the object route and the class route.
        for method in ["GET", "PUT", "DELETE"] {
            var body: [String: Any] = ["_method": method]
            if method == "PUT" { body["title"] = "x" }
            let r = try server.json("POST", "/parse/classes/Photo/\(photo)", body, headers: b.headers)
            #expect(F.code(r) == 101, "\(method): \(r.text)")
        }
        let overrideFind = try server.json(
            "POST", "/parse/classes/Photo", ["_method": "GET", "where": ["objectId": photo]], headers: b.headers)
        #expect(overrideFind.status == 200 && F.ids(overrideFind).isEmpty)
        // The JavaScript SDK's body token is a session too.
        let bodyToken = try server.json(
            "POST", "/parse/classes/Photo", ["_method": "GET", "_SessionToken": a.token, "where": ["objectId": photo]],
            anonymous: true)
        #expect(F.ids(bodyToken) == [photo])

        // batch, plain and in a transaction.
        let batch = try server.json(
            "POST", "/parse/batch",
            [
                "requests": [
                    ["method": "GET", "path": "/parse/classes/Photo/\(photo)"],
                    ["method": "PUT", "path": "/parse/classes/Photo/\(photo)", "body": ["title": "x"]],
                    ["method": "DELETE", "path": "/parse/classes/Photo/\(photo)"],
                    ["method": "DELETE", "path": "/parse/classes/Gallery/\(galleryA)"],
                ]
            ], headers: b.headers)
        for case let result as [String: Any] in batch.jsonArray {
            #expect((result["error"] as? [String: Any])?["code"] as? Int == 101, "\(batch.text)")
        }
        #expect(batch.jsonArray.count == 4)
        let transaction = try server.json(
            "POST", "/parse/batch",
            [
                "transaction": true,
                "requests": [
                    ["method": "PUT", "path": "/parse/classes/Photo/\(photosB[0])", "body": ["title": "fine"]],
                    ["method": "PUT", "path": "/parse/classes/Photo/\(photo)", "body": ["title": "x"]],
                ],
            ], headers: b.headers)
        #expect(F.code(transaction) == 101)

        let after = try server.request("GET", "/parse/classes/Photo/\(photo)", headers: a.headers)
        #expect(after.json["title"] as? String == "" && after.json["deletedAt"] == nil)
        let untouchedB = try server.request("GET", "/parse/classes/Photo/\(photosB[0])", headers: b.headers)
        #expect(untouchedB.json["title"] as? String == "", "the transaction rolled back")
        #expect(try count(server, "Photo", a.headers) == 2, "A trashed one of three")
        #expect(try server.request("GET", "/parse/classes/Gallery/\(galleryA)", headers: a.headers).status == 200)
    }

    @Test func etag_IsPerCaller_AndAnotherUsersTagIsNever304() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let a = try server.makeUser("alice")
        let b = try server.makeUser("bob")
        _ = try server.insertPhotos(2, owner: a.objectId)
        // Wait for the change sequences so answers carry tags.
        var tagA: String?
        for _ in 0..<100 where tagA == nil {
            tagA = try F.find(server, [:], headers: a.headers).header("ETag")
            if tagA == nil { Thread.sleep(forTimeInterval: 0.05) }
        }
        let etagA = try #require(tagA)
        let mine = try F.find(server, [:], headers: a.headers.merging(["If-None-Match": etagA]) { $1 })
        #expect(mine.status == 304)
        let theirs = try F.find(server, [:], headers: b.headers.merging(["If-None-Match": etagA]) { $1 })
        #expect(theirs.status == 200 && F.ids(theirs).isEmpty)
        #expect(theirs.header("ETag") != nil && theirs.header("ETag") != etagA)
        let anonymous = try F.find(server, [:], headers: ["If-None-Match": etagA], anonymous: true)
        #expect(anonymous.status == 200)
        // A bad token is 209 before any tag is compared.
        let bad = try F.find(server, [:], headers: ["X-Parse-Session-Token": "r:nope", "If-None-Match": etagA])
        #expect(F.code(bad) == 209)
    }

    @Test func sharedGallery_IsReadableThroughItselfOnly() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let a = try server.makeUser("alice")
        let b = try server.makeUser("bob")
        let photos = try server.insertPhotos(2, owner: a.objectId)
        let shared = try gallery(server, "Shared", acl: [b.objectId: ["read": true]], a)
        let other = try gallery(server, "Other", a)
        _ = try createdId(try item(server, gallery: shared, photo: photos[0], a))
        _ = try createdId(try item(server, gallery: other, photo: photos[1], a))

        let got = try server.request("GET", "/parse/classes/Gallery/\(shared)?include=coverPhoto", headers: b.headers)
        #expect(got.status == 200)
        #expect((got.json["ACL"] as? [String: Any])?[b.objectId] as? [String: Bool] == ["read": true])
        #expect((got.json["coverPhoto"] as? [String: Any])?["objectId"] as? String == photos[0])
        #expect(F.ids(try F.find(server, [:], className: "Gallery", headers: b.headers)) == [shared])
        #expect(F.code(try server.request("GET", "/parse/classes/Gallery/\(other)", headers: b.headers)) == 101)

        let items = try F.find(
            server, ["where": F.json(["gallery": TestServer.pointer("Gallery", shared)]), "include": "photo"],
            className: "GalleryItem", headers: b.headers)
        let included = F.results(items).first?["photo"] as? [String: Any]
        #expect(included?["objectId"] as? String == photos[0])
        // The bucket URL of a photo seen through the gallery is the photo's (the bucket serves it as it serves any).
        #expect((included?["original"] as? [String: Any])?["url"] as? String != nil)
        #expect(F.ids(try F.find(server, [:], className: "GalleryItem", headers: b.headers)).count == 1)
        #expect(try count(server, "GalleryItem", b.headers) == 1)
        #expect(try count(server, "Gallery", b.headers) == 1)
        // Through the Photo class B sees none of A's photos.
        #expect(F.ids(try F.find(server, [:], headers: b.headers)).isEmpty)
        #expect(F.code(try server.request("GET", "/parse/classes/Photo/\(photos[0])", headers: b.headers)) == 101)
        // Reading is not writing.
        #expect(
            F.code(try server.json("PUT", "/parse/classes/Gallery/\(shared)", ["name": "Bob's"], headers: b.headers))
                == 101)
        // Unsharing takes it away.
        #expect(
            try server.json(
                "PUT", "/parse/classes/Gallery/\(shared)", ["ACL": [:] as [String: Any]], headers: a.headers
            ).status == 200)
        #expect(F.code(try server.request("GET", "/parse/classes/Gallery/\(shared)", headers: b.headers)) == 101)
        // "*" read: every user (and, with public_read, every caller) reads it.
        let c = try server.makeUser("carol")
        #expect(
            try server.json(
                "PUT", "/parse/classes/Gallery/\(shared)", ["ACL": ["*": ["read": true]]], headers: a.headers
            ).status == 200)
        #expect(try server.request("GET", "/parse/classes/Gallery/\(shared)", headers: c.headers).status == 200)
        #expect(F.ids(try F.find(server, [:], className: "Gallery", headers: c.headers)) == [shared])
    }

    @Test func writeACL_EditsItemsAndName_ButNeitherTrashesNorReshares() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let a = try server.makeUser("alice")
        let b = try server.makeUser("bob")
        let c = try server.makeUser("carol")
        let photosA = try server.insertPhotos(2, owner: a.objectId)
        let photosB = try server.insertPhotos(1, owner: b.objectId)
        let shared = try gallery(
            server, "Family", acl: [b.objectId: ["read": true, "write": true], c.objectId: ["read": true]], a)
        let itemA = try createdId(try item(server, gallery: shared, photo: photosA[0], a))

        // B adds B's photo, moves it, renames the gallery, removes A's item.
        let itemB = try createdId(try item(server, gallery: shared, photo: photosB[0], b))
        #expect(
            try server.json("PUT", "/parse/classes/GalleryItem/\(itemB)", ["position": 0], headers: b.headers).status
                == 200)
        #expect(
            try server.json("PUT", "/parse/classes/Gallery/\(shared)", ["name": "Family 2026"], headers: b.headers)
                .status == 200)
        #expect(try server.storedItems(of: shared).map(\.photo) == [photosB[0], photosA[0]])
        #expect(try server.request("DELETE", "/parse/classes/GalleryItem/\(itemA)", headers: b.headers).status == 200)
        // The item B added is B's.
        let bItem = try server.request("GET", "/parse/classes/GalleryItem/\(itemB)", headers: a.headers)
        #expect((bItem.json["owner"] as? [String: Any])?["objectId"] as? String == b.objectId)

        // B may not: add a photo B does not own, trash A's photos, trash or restore or purge the
        // gallery, change its ACL.
        #expect(F.code(try item(server, gallery: shared, photo: photosA[1], b)) == 101)
        #expect(F.code(try server.request("DELETE", "/parse/classes/Photo/\(photosA[0])", headers: b.headers)) == 101)
        #expect(F.code(try server.request("DELETE", "/parse/classes/Gallery/\(shared)", headers: b.headers)) == 101)
        let reshare = try server.json(
            "PUT", "/parse/classes/Gallery/\(shared)", ["ACL": ["*": ["read": true]]], headers: b.headers)
        #expect(F.code(reshare) == 101)
        // C reads but may not add, move or remove.
        let photosC = try server.insertPhotos(1, owner: c.objectId)
        #expect(F.code(try item(server, gallery: shared, photo: photosC[0], c)) == 101)
        #expect(
            F.code(try server.json("PUT", "/parse/classes/GalleryItem/\(itemB)", ["position": 1], headers: c.headers))
                == 101)
        #expect(F.code(try server.request("DELETE", "/parse/classes/GalleryItem/\(itemB)", headers: c.headers)) == 101)
        #expect(F.ids(try F.find(server, [:], className: "GalleryItem", headers: c.headers)) == [itemB])
        // The owner trashes, restores and purges.
        #expect(try server.request("DELETE", "/parse/classes/Gallery/\(shared)", headers: a.headers).status == 200)
        #expect(
            F.code(
                try server.json(
                    "PUT", "/parse/classes/Gallery/\(shared)", ["deletedAt": ["__op": "Delete"]], headers: b.headers))
                == 101)
        #expect(F.code(try server.request("DELETE", "/parse/purge/Gallery/\(shared)", headers: b.headers)) == 101)
        #expect(try server.request("DELETE", "/parse/purge/Gallery/\(shared)", headers: a.headers).status == 200)
        #expect(
            try server.request("GET", "/parse/classes/Photo/\(photosB[0])", headers: b.headers).status == 200,
            "B's photo stays B's")
    }

    /// The trash is its owner's: a reader of a shared (or, with `public_read`, public) gallery
    /// never gets a trashed photo through an item, nor the trashed gallery, by a get by id, an
    /// `include` or a `where` on `deletedAt` (issue #25, item 9).
    @Test func trash_IsItsOwnersAlone_ThroughGetIncludeAndDeletedAtQueries() throws {
        let server = try TestServer(workers: 0) { $0.publicRead = true }
        defer { server.stop() }
        let a = try server.makeUser("alice")
        let b = try server.makeUser("bob")
        let photos = try server.insertPhotos(2, owner: a.objectId)
        let shared = try gallery(server, "Shared", acl: [b.objectId: ["read": true], "*": ["read": true]], a)
        let trashedItem = try createdId(try item(server, gallery: shared, photo: photos[0], a))
        let liveItem = try createdId(try item(server, gallery: shared, photo: photos[1], a))
        #expect(try server.request("DELETE", "/parse/classes/Photo/\(photos[0])", headers: a.headers).status == 200)

        func get(_ path: String, _ headers: [String: String]?) throws -> TestServer.Response {
            try server.request("GET", "/parse/classes/" + path, headers: headers ?? [:], anonymous: headers == nil)
        }
        for (who, headers) in [("B", b.headers), ("no session", nil)] {
            let viaItem = try get("GalleryItem/\(trashedItem)?include=photo", headers)
            #expect(viaItem.status == 404 && F.code(viaItem) == 101, "\(who): \(viaItem.text)")
            let live = try get("GalleryItem/\(liveItem)?include=photo", headers)
            #expect((live.json["photo"] as? [String: Any])?["original"] != nil, "\(who): \(live.text)")
        }
        // The owner (and the master key) still see it, to restore it.
        let own = try get("GalleryItem/\(trashedItem)?include=photo", a.headers)
        #expect((own.json["photo"] as? [String: Any])?["deletedAt"] != nil, "\(own.text)")
        #expect(try get("GalleryItem/\(trashedItem)?include=photo", Self.master).status == 200)

        // A trashed gallery: its owner's Recently Deleted, no one else's.
        #expect(try server.request("DELETE", "/parse/classes/Gallery/\(shared)", headers: a.headers).status == 200)
        let inTrash = ["where": F.json(["deletedAt": ["$exists": true]])]
        for (who, headers) in [("B", b.headers), ("no session", nil)] {
            let r = try get("Gallery/\(shared)", headers)
            #expect(r.status == 404 && F.code(r) == 101, "\(who): \(r.text)")
            let found = try F.find(
                server, inTrash, className: "Gallery", headers: headers ?? [:], anonymous: headers == nil)
            #expect(found.status == 200 && F.results(found).isEmpty, "\(who): \(found.text)")
        }
        #expect(try get("Gallery/\(shared)", a.headers).json["deletedAt"] != nil)
        #expect(F.ids(try F.find(server, inTrash, className: "Gallery", headers: a.headers)) == [shared])
    }

    @Test func acl_IsValidated_AndOnlyTheMasterKeyGivesObjectsAway() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let a = try server.makeUser("alice")
        let b = try server.makeUser("bob")
        let role = try create(server, "Gallery", ["name": "x", "ACL": ["role:Admins": ["read": true]]], a)
        #expect(role.status == 201, "\(role.text)")
        for acl: Any in [
            "public", ["*": true], ["*": ["read": "yes"]], ["*": ["delete": true]], ["not an id!": ["read": true]],
            ["role:Bad!": ["read": true]], ["role:": ["read": true]],
        ] {
            let r = try create(server, "Gallery", ["name": "x", "ACL": acl], a)
            #expect(r.status == 400 && F.code(r) == 123, "\(acl): \(r.text)")
        }
        // owner: a user may name only themself; the master key anyone (but a user).
        let forB = try create(server, "Gallery", ["name": "x", "owner": TestServer.pointer("_User", b.objectId)], a)
        #expect(F.code(forB) == 119)
        let given = try createdId(
            try server.json(
                "POST", "/parse/classes/Gallery", ["name": "Gift", "owner": TestServer.pointer("_User", b.objectId)],
                headers: Self.master))
        #expect(try server.request("GET", "/parse/classes/Gallery/\(given)", headers: b.headers).status == 200)
        let nobody = try server.json(
            "POST", "/parse/classes/Gallery", ["name": "x", "owner": TestServer.pointer("_User", "NoSuchUser")],
            headers: Self.master)
        #expect(F.code(nobody) == 106)
        // owner never changes; sending it back unchanged (an SDK's save) is fine.
        let mine = try gallery(server, "Mine", a)
        #expect(
            try server.json(
                "PUT", "/parse/classes/Gallery/\(mine)", ["owner": TestServer.pointer("_User", a.objectId)],
                headers: a.headers
            ).status == 200)
        #expect(
            F.code(
                try server.json(
                    "PUT", "/parse/classes/Gallery/\(mine)", ["owner": TestServer.pointer("_User", b.objectId)],
                    headers: a.headers)) == 105)
        // Queries on owner work (the master key's view of one user).
        let bs = try F.find(
            server, ["where": F.json(["owner": TestServer.pointer("_User", b.objectId)])], className: "Gallery",
            headers: Self.master)
        #expect(F.ids(bs) == [given])
    }

    @Test func noSession_ReadsAndWritesNothing_AndBadTokensAre209() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let a = try server.makeUser("alice")
        let photos = try server.insertPhotos(2, owner: a.objectId)
        let publicGallery = try gallery(server, "Public", acl: ["*": ["read": true]], a)
        _ = try createdId(try item(server, gallery: publicGallery, photo: photos[0], a))

        #expect(F.ids(try F.find(server, anonymous: true)).isEmpty)
        #expect(try count(server, "Photo", [:], anonymous: true) == 0)
        #expect(F.ids(try F.find(server, [:], className: "Gallery", anonymous: true)).isEmpty, "public_read is off")
        #expect(F.code(try server.request("GET", "/parse/classes/Photo/\(photos[0])", anonymous: true)) == 101)
        #expect(F.code(try server.request("GET", "/parse/classes/Gallery/\(publicGallery)", anonymous: true)) == 101)
        let create = try server.json("POST", "/parse/classes/Gallery", ["name": "Anonymous"], anonymous: true)
        #expect(create.status == 400 && F.code(create) == 119, "\(create.text)")
        let upload = try server.request(
            "POST", "/parse/files/a.jpg", body: Data(try TestJPEG.make(width: 32, height: 24, seed: 1)),
            headers: ["Content-Type": "image/jpeg"], anonymous: true)
        #expect(upload.status == 400 && F.code(upload) == 130, "\(upload.text)")
        #expect(F.code(try server.request("DELETE", "/parse/classes/Photo/\(photos[0])", anonymous: true)) == 101)
        for headers in [["X-Parse-Session-Token": "r:0000"], ["X-Parse-Session-Token": "bad token"]] {
            let r = try F.find(server, [:], headers: headers)
            #expect(r.status == 400 && F.code(r) == 209, "\(r.text)")
        }
        // An expired session is a bad token (one not used yet, so no process has it cached).
        let late = try server.makeUser("late")
        try server.application.pool.query(
            "update sessions set expires_at = clock_timestamp() - interval '1 second' where user_id = $1",
            [late.objectId])
        let expired = try server.request("GET", "/parse/classes/Photo/\(photos[0])", headers: late.headers)
        #expect(F.code(expired) == 209, "\(expired.text)")
    }

    @Test func publicRead_ShowsPublicGalleriesTheirItemsAndPhotos_Only() throws {
        let server = try TestServer(workers: 0) { $0.publicRead = true }
        defer { server.stop() }
        let a = try server.makeUser("alice")
        let photos = try server.insertPhotos(2, owner: a.objectId)
        let publicGallery = try gallery(server, "Public", acl: ["*": ["read": true]], a)
        let privateGallery = try gallery(server, "Private", a)
        _ = try createdId(try item(server, gallery: publicGallery, photo: photos[0], a))
        _ = try createdId(try item(server, gallery: privateGallery, photo: photos[1], a))

        #expect(F.ids(try F.find(server, [:], className: "Gallery", anonymous: true)) == [publicGallery])
        #expect(try count(server, "Gallery", [:], anonymous: true) == 1)
        #expect(try server.request("GET", "/parse/classes/Gallery/\(publicGallery)", anonymous: true).status == 200)
        #expect(F.code(try server.request("GET", "/parse/classes/Gallery/\(privateGallery)", anonymous: true)) == 101)
        let items = try F.find(server, ["include": "photo"], className: "GalleryItem", anonymous: true)
        #expect(F.results(items).compactMap { ($0["photo"] as? [String: Any])?["objectId"] as? String } == [photos[0]])
        #expect(F.ids(try F.find(server, anonymous: true)).isEmpty, "photos only through the gallery")
        #expect(try count(server, "Photo", [:], anonymous: true) == 0)
        #expect(
            F.code(try server.json("PUT", "/parse/classes/Gallery/\(publicGallery)", ["name": "x"], anonymous: true))
                == 101)
        #expect(F.code(try server.json("POST", "/parse/classes/Gallery", ["name": "x"], anonymous: true)) == 119)
    }

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

    @Test func requestIds_NeverReplayAnotherUsersAnswer() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let a = try server.makeUser("alice")
        let b = try server.makeUser("bob")
        let id = ["X-Parse-Request-Id": "shared-request-id"]
        let first = try createdId(try create(server, "Gallery", ["name": "A's"], a.headers.merging(id) { $1 }))
        #expect(try createdId(try create(server, "Gallery", ["name": "A's"], a.headers.merging(id) { $1 })) == first)
        // B's create with the same id, by header or by the JavaScript SDK's body token, is B's own.
        let second = try createdId(try create(server, "Gallery", ["name": "B's"], b.headers.merging(id) { $1 }))
        #expect(second != first)
        // The same user and id through the body token is the same request: B's answer again.
        let third = try server.json(
            "POST", "/parse/classes/Gallery", ["name": "B's", "_SessionToken": b.token], headers: id, anonymous: true)
        #expect(try createdId(third) == second)
        #expect(F.ids(try F.find(server, [:], className: "Gallery", headers: b.headers)) == [second])
        #expect(F.ids(try F.find(server, [:], className: "Gallery", headers: a.headers)) == [first])
    }

    @Test func liveQuery_SendsEachSubscriberOnlyWhatItMayRead() throws {
        let python = try #require(
            ProcessInfo.processInfo.environment["GALLERYD_TEST_PYTHON"],
            "GALLERYD_TEST_PYTHON is not set: run the tests with scripts/test.sh (make test), which installs `websockets`"
        )
        let server = try TestServer(workers: 0, listening: true)
        defer { server.stop() }
        #expect(server.application.liveQuery.waitUntilListening(timeout: 10))
        let a = try server.makeUser("alice")
        let b = try server.makeUser("bob")
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
            .appendingPathComponent("e2e/live_query_owners_e2e.py").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [script, server.baseURL, TestServer.appID, a.token, b.token, b.objectId]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(text)")
        #expect(text.contains("\"ok\": true"), "\(text)")
    }
}
