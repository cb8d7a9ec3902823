import Foundation
import Testing

@testable import GalleryApp

/// Per-object ACLs on Photo (issue #27, item 4): by default a photo is its owner's alone; its
/// `ACL` shares it with users, roles (`role:Name`) or everyone (`*`), and gets, finds, counts,
/// updates, deletes and LiveQuery all agree, since they share one filter.
struct PhotoACLTests {
    private typealias F = ManifestFixtures

    private func setACL(_ server: TestServer, _ photo: String, _ acl: Any, _ user: TestUser) throws
        -> TestServer.Response
    {
        try server.json("PUT", "/parse/classes/Photo/\(photo)", ["ACL": acl], headers: user.headers)
    }

    private func count(_ server: TestServer, _ headers: [String: String], anonymous: Bool = false) throws -> Int? {
        try F.find(server, ["count": "1", "limit": "0"], headers: headers, anonymous: anonymous).json["count"] as? Int
    }

    @Test func photoSharedWithARole_IsReadByItsMembersOnly_EverywhereAlike() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let alice = try server.makeUser("alice")
        let bob = try server.makeUser("bob")
        let carol = try server.makeUser("carol")
        let photos = try server.insertPhotos(3, owner: bob.objectId)
        _ = try server.insertPhotos(2, owner: alice.objectId)
        let role = try server.json(
            "POST", "/parse/roles",
            [
                "name": "Friends", "ACL": ["*": ["read": true]],
                "users": ["__op": "AddRelation", "objects": [TestServer.pointer("_User", alice.objectId)]],
            ])
        #expect(role.status == 201, "\(role.text)")

        // Default: bob's alone.
        #expect(F.code(try server.request("GET", "/parse/classes/Photo/\(photos[0])", headers: alice.headers)) == 101)
        #expect(try count(server, alice.headers) == 2)
        // Only the owner sets the ACL (a reader or a stranger: 101).
        #expect(F.code(try setACL(server, photos[0], ["role:Friends": ["read": true]], alice)) == 101)
        #expect(try setACL(server, photos[0], ["role:Friends": ["read": true]], bob).status == 200)
        let got = try server.request("GET", "/parse/classes/Photo/\(photos[0])", headers: alice.headers)
        #expect(got.status == 200, "\(got.text)")
        #expect((got.json["ACL"] as? [String: Any])?["role:Friends"] != nil)
        // The original's (signed) URL is handed to the reader, the same as to its owner.
        let ownerView = try server.request("GET", "/parse/classes/Photo/\(photos[0])", headers: bob.headers)
        let url = (got.json["original"] as? [String: Any])?["url"] as? String
        #expect(url != nil && url == (ownerView.json["original"] as? [String: Any])?["url"] as? String, "\(got.text)")
        #expect(Set(F.ids(try F.find(server, headers: alice.headers))).contains(photos[0]))
        #expect(try count(server, alice.headers) == 3)
        #expect(F.ids(try F.find(server, ["where": F.json(["objectId": photos[0]])], headers: carol.headers)).isEmpty)
        #expect(try count(server, carol.headers) == 0)
        #expect(try count(server, bob.headers) == 3)
        // Read is not write: a member may not retitle or trash it.
        #expect(
            F.code(try server.json("PUT", "/parse/classes/Photo/\(photos[0])", ["title": "x"], headers: alice.headers))
                == 101)
        #expect(
            F.code(try server.request("DELETE", "/parse/classes/Photo/\(photos[0])", headers: alice.headers)) == 101)
        // A write grant lets a member retitle it, never change its ACL.
        #expect(try setACL(server, photos[0], ["role:Friends": ["read": true, "write": true]], bob).status == 200)
        #expect(
            try server.json("PUT", "/parse/classes/Photo/\(photos[0])", ["title": "x"], headers: alice.headers).status
                == 200)
        #expect(F.code(try setACL(server, photos[0], ["*": ["read": true]], alice)) == 101)
        // Trashed: the owner's alone again.
        #expect(try server.request("DELETE", "/parse/classes/Photo/\(photos[0])", headers: bob.headers).status == 200)
        #expect(F.code(try server.request("GET", "/parse/classes/Photo/\(photos[0])", headers: alice.headers)) == 101)
        #expect(try count(server, alice.headers) == 2)
        // ACL of the wrong shape: 123.
        for acl: Any in ["public", ["*": true], ["role:No!": ["read": true]], [alice.objectId: ["read": "yes"]]] {
            let r = try setACL(server, photos[1], acl, bob)
            #expect(r.status == 400 && F.code(r) == 123, "\(acl): \(r.text)")
        }
    }

    /// A member's Photo ETag moves when a photo is shared with their role and when it is
    /// unshared, and not when the owner changes a photo no one else reads.
    @Test func sharing_MovesTheReadersETag_Only() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let alice = try server.makeUser("alice")
        let bob = try server.makeUser("bob")
        let photos = try server.insertPhotos(2, owner: bob.objectId)
        #expect(
            try server.json(
                "POST", "/parse/roles",
                [
                    "name": "Friends", "ACL": [:] as [String: Any],
                    "users": ["__op": "AddRelation", "objects": [TestServer.pointer("_User", alice.objectId)]],
                ]
            ).status == 201)
        func tag() throws -> String {
            for _ in 0..<100 {
                if let tag = try F.find(server, headers: alice.headers).header("ETag") { return tag }
                Thread.sleep(forTimeInterval: 0.05)
            }
            throw TestSetupError(description: "no ETag")
        }
        func revalidated(_ tag: String) throws -> Int {
            try F.find(server, headers: alice.headers.merging(["If-None-Match": tag]) { $1 }).status
        }
        let before = try tag()
        #expect(try revalidated(before) == 304)
        #expect(
            try server.json("PUT", "/parse/classes/Photo/\(photos[1])", ["title": "private"], headers: bob.headers)
                .status == 200)
        #expect(try revalidated(before) == 304, "a photo alice cannot read changed")
        // The Parse Swift SDK's private ACL (the owner alone) keeps it from her too.
        #expect(try setACL(server, photos[1], [bob.objectId: ["read": true, "write": true]], bob).status == 200)
        #expect(try revalidated(before) == 304)
        #expect(try setACL(server, photos[0], ["role:Friends": ["read": true]], bob).status == 200)
        #expect(try revalidated(before) == 200, "shared with her role")
        let shared = try tag()
        #expect(F.ids(try F.find(server, headers: alice.headers)) == [photos[0]])
        #expect(try setACL(server, photos[0], [:] as [String: Any], bob).status == 200)
        #expect(try revalidated(shared) == 200, "unshared")
        #expect(F.ids(try F.find(server, headers: alice.headers)).isEmpty)
    }

    @Test func publicPhoto_IsReadByTheAppIdAlone_WithPublicRead() throws {
        let server = try TestServer(workers: 0) { $0.publicRead = true }
        defer { server.stop() }
        let bob = try server.makeUser("bob")
        let carol = try server.makeUser("carol")
        let photos = try server.insertPhotos(2, owner: bob.objectId)
        #expect(F.ids(try F.find(server, anonymous: true)).isEmpty)
        #expect(try count(server, [:], anonymous: true) == 0)
        #expect(try setACL(server, photos[1], ["*": ["read": true]], bob).status == 200)
        #expect(F.ids(try F.find(server, anonymous: true)) == [photos[1]])
        #expect(try count(server, [:], anonymous: true) == 1)
        #expect(try server.request("GET", "/parse/classes/Photo/\(photos[1])", anonymous: true).status == 200)
        #expect(F.code(try server.request("GET", "/parse/classes/Photo/\(photos[0])", anonymous: true)) == 101)
        #expect(F.ids(try F.find(server, headers: carol.headers)) == [photos[1]])
        // Reading is all it gives.
        #expect(
            F.code(try server.json("PUT", "/parse/classes/Photo/\(photos[1])", ["title": "x"], anonymous: true)) == 101)
    }

    @Test func publicPhoto_StaysPrivateToTheAppId_WithoutPublicRead() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let bob = try server.makeUser("bob")
        let photo = try server.insertPhotos(1, owner: bob.objectId)[0]
        #expect(try setACL(server, photo, ["*": ["read": true]], bob).status == 200)
        #expect(F.ids(try F.find(server, anonymous: true)).isEmpty)
        #expect(F.code(try server.request("GET", "/parse/classes/Photo/\(photo)", anonymous: true)) == 101)
    }

    /// LiveQuery decides from the row the trigger sends; it must agree with the SQL filter a find
    /// runs, for each caller and each ACL.
    @Test func liveQuery_AgreesWithFind_ForEveryCallerAndACL() throws {
        let server = try TestServer(workers: 0) { $0.publicRead = true }
        defer { server.stop() }
        let alice = try server.makeUser("alice")
        let bob = try server.makeUser("bob")
        let carol = try server.makeUser("carol")
        let photo = try server.insertPhotos(1, owner: bob.objectId)[0]
        let api = ParseAPI(application: server.application)
        let roles = server.application.sessions.roles
        let callers: [ParseAccess] = [
            ParseAccess(caller: .user(objectId: alice.objectId), publicRead: true, roleNames: ["Friends"]),
            ParseAccess(caller: .user(objectId: bob.objectId), publicRead: true),
            ParseAccess(caller: .user(objectId: carol.objectId), publicRead: true),
            ParseAccess(caller: .anonymous, publicRead: true),
            try roles.access(for: .user(objectId: carol.objectId), publicRead: false),
        ]
        let acls: [[String: Any]] = [
            [:], ["role:Friends": ["read": true]], ["*": ["read": true]], [carol.objectId: ["read": true]],
            ["role:Friends": ["write": true]],
        ]
        for acl in acls {
            #expect(try setACL(server, photo, acl, bob).status == 200)
            let rowJSON = try server.application.pool.query(
                "select (to_jsonb(p) - 'search')::text from photos p where object_id = $1", [photo]
            ).first!.decode(String.self, 0)
            let row = try #require(try JSONSerialization.jsonObject(with: Data(rowJSON.utf8)) as? [String: Any])
            let event = try #require(
                LiveQueryEvent.decode(#"{"className":"Photo","op":"update","old":null,"new":\#(rowJSON)}"#).event)
            for access in callers {
                let found = try api.find("Photo", items: [("where", F.json(["objectId": photo]))], access: access)
                let json = try JSONSerialization.jsonObject(with: Data(found.json)) as? [String: Any]
                let inFind = ((json?["results"] as? [Any]) ?? []).count == 1
                #expect(event.readable(row, by: access) == inFind, "\(acl) \(access.caller) \(access.roleNames)")
            }
        }
    }
}
