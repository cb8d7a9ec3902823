import Foundation
import Testing

@testable import GalleryApp

/// Ownership and access (issue #15): a user reads and changes only their own photos and galleries
/// and what is shared with them, by every route; a shared gallery is readable through itself only;
/// the master key sees everything; no session reads nothing (or what is public with
/// `public_read`); the upgrade gives ownerless rows to the first admin.
struct OwnershipTests {
    /// The find and id helpers every file of the suite uses.
    typealias F = ManifestFixtures

    /// Creates an object of `className` as `user` (nil: the master key).
    func create(_ server: TestServer, _ className: String, _ body: [String: Any], _ user: TestUser?) throws
        -> TestServer.Response
    {
        try create(server, className, body, user?.headers ?? [:])
    }

    /// Creates an object of `className` with `headers`.
    func create(_ server: TestServer, _ className: String, _ body: [String: Any], _ headers: [String: String])
        throws -> TestServer.Response
    {
        try server.json("POST", "/parse/classes/\(className)", body, headers: headers)
    }

    /// The objectId a create answered (the test fails when it answered none).
    func createdId(_ response: TestServer.Response) throws -> String {
        try #require(response.json["objectId"] as? String, "create failed: \(response.status) \(response.text)")
    }

    /// Creates a gallery owned by `user`, with `acl` when given; returns its objectId.
    func gallery(_ server: TestServer, _ name: String, acl: [String: Any]? = nil, _ user: TestUser) throws
        -> String
    {
        var body: [String: Any] = ["name": name]
        if let acl { body["ACL"] = acl }
        return try createdId(try create(server, "Gallery", body, user))
    }

    /// Adds `photo` to `gallery` as `user`.
    func item(_ server: TestServer, gallery: String, photo: String, _ user: TestUser) throws
        -> TestServer.Response
    {
        try create(
            server, "GalleryItem",
            ["gallery": TestServer.pointer("Gallery", gallery), "photo": TestServer.pointer("Photo", photo)], user)
    }

    /// `count=1&limit=0` on `className` with `headers` (and `where`); nil when the answer has no count.
    func count(
        _ server: TestServer, _ className: String, _ headers: [String: String], where condition: [String: Any]? = nil,
        anonymous: Bool = false
    ) throws -> Int? {
        var items = ["count": "1", "limit": "0"]
        if let condition { items["where"] = F.json(condition) }
        return try F.find(server, items, className: className, headers: headers, anonymous: anonymous).json["count"]
            as? Int
    }

    /// The master key, as `headers`.
    static let master = ["X-Parse-Master-Key": TestServer.masterKey]

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
        let etagA = try server.settledETag { try F.find(server, [:], headers: a.headers).header("ETag") }
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
        let server = try TestServer(workers: 0, listening: true)
        defer { server.stop() }
        #expect(server.application.liveQuery.waitUntilListening(timeout: 10))
        let a = try server.makeUser("alice")
        let b = try server.makeUser("bob")
        let run = try runLiveQueryScript(
            "live_query_owners_e2e.py", [server.baseURL, TestServer.appID, a.token, b.token, b.objectId])
        #expect(run.status == 0, "\(run.output)")
        #expect(run.output.contains("\"ok\": true"), "\(run.output)")
    }
}
