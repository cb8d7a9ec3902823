import Foundation
import Testing

@testable import GalleryApp

/// Finding users (`GET /parse/users`, `GET /parse/classes/_User`) as Parse Server answers it: every
/// account for a logged-in caller, `email` only on the caller's own row and for the master key,
/// never a password; the query language of the classes with 102 for what it does not know; no
/// session is 209 (with `public_read`, the list without emails). And the SDK flow it exists for:
/// look a user up by username and share a gallery with them.
@Suite(.serialized) struct UserQueryTests {
    private typealias F = ManifestFixtures
    private static let master = ["X-Parse-Master-Key": TestServer.masterKey]

    private func users(
        _ server: TestServer, _ items: [String: String] = [:], path: String = "/parse/users",
        headers: [String: String]
    ) throws -> TestServer.Response {
        let q = F.query(items)
        return try server.request("GET", path + (q.isEmpty ? "" : "?" + q), headers: headers)
    }

    private func setEmail(_ server: TestServer, _ user: TestUser, _ email: String) throws {
        try server.application.pool.query("update users set email = $1 where object_id = $2", [email, user.objectId])
    }

    @Test func find_ShowsEveryUser_EmailOnlyToItselfAndTheMasterKey_NeverAPassword() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        // No account yet: nothing to list, and still no list without a session (no single-tenant mode).
        let none = try users(server, headers: ["X-Parse-Master-Key": TestServer.masterKey])
        #expect(none.status == 200 && F.results(none).isEmpty, "\(none.text)")
        let noSession = try users(server, headers: [:])
        #expect(noSession.status == 400 && F.code(noSession) == 209, "\(noSession.text)")

        let alice = try server.makeUser("alice")
        let bob = try server.makeUser("bob")
        try setEmail(server, alice, "alice@example.org")
        try setEmail(server, bob, "bob@example.org")

        // Both paths, the Parse way: {results:[…]}, newest first by default.
        for path in ["/parse/users", "/parse/classes/_User"] {
            let all = try users(server, path: path, headers: alice.headers)
            #expect(all.status == 200, "\(path): \(all.text)")
            #expect(F.ids(all) == [bob.objectId, alice.objectId], "\(path): \(all.text)")
            for object in F.results(all) {
                #expect(
                    Set(object.keys).isSubset(of: ["objectId", "username", "email", "createdAt", "updatedAt"]),
                    "\(object)")
                #expect(object["createdAt"] is String && object["updatedAt"] is String)
                let isAlice = object["objectId"] as? String == alice.objectId
                #expect(object["email"] as? String == (isAlice ? "alice@example.org" : nil), "\(path): \(object)")
            }
            #expect(
                !all.text.contains("password") && !all.text.contains("scrypt") && !all.text.contains("test-no-password")
            )
        }
        // The master key sees every email.
        let master = try users(server, ["order": "username"], headers: Self.master)
        #expect(F.results(master).map { $0["email"] as? String } == ["alice@example.org", "bob@example.org"])

        // where, order, limit, skip, count, keys.
        let byName = try users(server, ["where": F.json(["username": "bob"])], headers: alice.headers)
        #expect(F.ids(byName) == [bob.objectId])
        #expect(F.results(byName).first?["username"] as? String == "bob")
        let page = try users(
            server, ["order": "username", "limit": "1", "skip": "1", "count": "1"], headers: alice.headers)
        #expect(F.ids(page) == [bob.objectId] && page.json["count"] as? Int == 2, "\(page.text)")
        let countOnly = try users(
            server, ["count": "1", "limit": "0", "where": F.json(["username": ["$regex": "^al"]])], headers: bob.headers
        )
        #expect(countOnly.json["count"] as? Int == 1 && F.results(countOnly).isEmpty, "\(countOnly.text)")
        let keys = try users(server, ["keys": "email", "order": "-username"], headers: bob.headers)
        #expect(
            F.results(keys).map { Set($0.keys) } == [
                ["objectId", "createdAt", "updatedAt", "email"], ["objectId", "createdAt", "updatedAt"],
            ], "\(keys.text)")
        // The SDKs' long queries: POST with _method GET.
        let override = try server.json(
            "POST", "/parse/users", ["_method": "GET", "where": ["username": "alice"]], headers: bob.headers)
        #expect(F.ids(override) == [alice.objectId], "\(override.text)")

        // email is protected: a query on it would tell whose address it is (119), unless with the master key.
        for condition: [String: Any] in [
            ["email": "bob@example.org"], ["$or": [["username": "x"], ["email": ["$exists": true]]]],
        ] {
            let r = try users(server, ["where": F.json(condition)], headers: alice.headers)
            #expect(r.status == 400 && F.code(r) == 119, "\(r.text)")
            #expect(r.json["error"] as? String == "This user is not allowed to query email on class _User")
        }
        let masterByEmail = try users(server, ["where": F.json(["email": "bob@example.org"])], headers: Self.master)
        #expect(F.ids(masterByEmail) == [bob.objectId])

        // What it does not know is 102, in Parse's JSON.
        for items in [
            ["where": F.json(["password": "x"])], ["where": F.json(["nope": 1])], ["where": "{"],
            ["order": "email"], ["keys": "password"], ["include": "owner"], ["bogus": "1"],
        ] {
            let r = try users(server, items, headers: alice.headers)
            #expect(r.status == 400 && F.code(r) == 102, "\(items): \(r.status) \(r.text)")
            #expect(r.header("Content-Type")?.hasPrefix("application/json") == true)
        }

        // No session: 209, as GET /users/me answers; a bad token too; no keys at all: 403.
        let anonymous = try users(server, headers: [:])
        #expect(anonymous.status == 400 && F.code(anonymous) == 209, "\(anonymous.text)")
        let badToken = try users(server, headers: ["X-Parse-Session-Token": "r:nope"])
        #expect(F.code(badToken) == 209)
        let noKeys = try server.request("GET", "/parse/users", appID: nil)
        #expect(noKeys.status == 403)
    }

    @Test func find_WithPublicRead_ListsUsersWithoutEmail() throws {
        let server = try TestServer(workers: 0) { $0.publicRead = true }
        defer { server.stop() }
        let alice = try server.makeUser("alice")
        try setEmail(server, alice, "alice@example.org")
        let r = try users(server, ["count": "1"], headers: [:])
        #expect(r.status == 200 && F.ids(r) == [alice.objectId] && r.json["count"] as? Int == 1, "\(r.text)")
        #expect(F.results(r).first?["username"] as? String == "alice")
        #expect(F.results(r).first?["email"] == nil, "\(r.text)")
        let byEmail = try users(server, ["where": F.json(["email": "alice@example.org"])], headers: [:])
        #expect(F.code(byEmail) == 119)
    }

    /// ParseSwift's `ParseUser.query("username" == "bob").first()` then an ACL on a Gallery: the
    /// way an app shares an album with someone it knows by name.
    @Test func sdkFlow_LooksUpBobByUsername_SharesAGallery_BobReadsIt() throws {
        let server = try TestServer(workers: 0) { $0.signupOpen = true }
        defer { server.stop() }
        let alice = try AccountTests.signUp(server, "alice", "alice's passphrase")
        let bob = try AccountTests.signUp(server, "bob", "bob's passphrase")
        let aliceHeaders = ["X-Parse-Session-Token": alice.token]
        let bobHeaders = ["X-Parse-Session-Token": bob.token]

        let created = try server.json("POST", "/parse/classes/Gallery", ["name": "Holiday"], headers: aliceHeaders)
        let gallery = try #require(created.json["objectId"] as? String, "\(created.text)")
        #expect(F.code(try server.request("GET", "/parse/classes/Gallery/\(gallery)", headers: bobHeaders)) == 101)
        #expect(
            try F.find(server, ["count": "1", "limit": "0"], className: "Gallery", headers: bobHeaders).json["count"]
                as? Int == 0)

        // The SDK's query, exactly: limit=1, the where as JSON, order as a JSON array.
        let lookup = try server.request(
            "GET",
            "/parse/classes/_User?limit=1&order=%5B%22-createdAt%22%5D&skip=0&where=%7B%22username%22:%22bob%22%7D",
            headers: aliceHeaders)
        #expect(lookup.status == 200, "\(lookup.text)")
        let found = try #require(F.results(lookup).first)
        let bobId = try #require(found["objectId"] as? String)
        #expect(bobId == bob.id && found["email"] == nil)

        let share = try server.json(
            "PUT", "/parse/classes/Gallery/\(gallery)",
            ["ACL": [alice.id: ["read": true, "write": true], bobId: ["read": true]]], headers: aliceHeaders)
        #expect(share.status == 200, "\(share.text)")
        let read = try server.request("GET", "/parse/classes/Gallery/\(gallery)", headers: bobHeaders)
        #expect(read.status == 200 && read.json["name"] as? String == "Holiday", "\(read.text)")
        #expect(F.ids(try F.find(server, [:], className: "Gallery", headers: bobHeaders)) == [gallery])
        #expect(
            try F.find(server, ["count": "1", "limit": "0"], className: "Gallery", headers: bobHeaders).json["count"]
                as? Int == 1)
        // Read, not write: bob cannot rename it.
        #expect(
            F.code(try server.json("PUT", "/parse/classes/Gallery/\(gallery)", ["name": "Mine"], headers: bobHeaders))
                == 101)
    }
}
