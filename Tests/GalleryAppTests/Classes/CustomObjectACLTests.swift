import Foundation
import Testing

@testable import GalleryApp

/// Per-object ACLs on custom classes (issue 27 item 4, docs/decisions/036), as Parse Server applies
/// them: no ACL is public, `*`/user/`role:` grants, the master key bypasses; another's object is
/// 101 on get, update and delete; counts agree with finds; a malformed ACL is 123.
@Suite struct CustomObjectACLTests {
    private typealias F = ManifestFixtures

    /// A class every caller may use (Parse Server's default CLP), so only the ACLs decide.
    private func publicClass(_ server: TestServer, _ name: String) throws {
        let ops = ["find", "get", "count", "create", "update", "delete", "addField"]
        let clp = Dictionary(uniqueKeysWithValues: ops.map { ($0, ["*": true]) })
        let made = try server.json(
            "POST", "/parse/schemas/\(name)",
            ["fields": ["text": ["type": "String"]], "classLevelPermissions": clp])
        #expect(made.status == 200, "\(made.text)")
    }

    private func create(_ server: TestServer, _ body: [String: Any], _ user: TestUser) throws -> String {
        let r = try server.json("POST", "/parse/classes/Diary", body, headers: user.headers)
        return try #require(r.status == 201 ? r.json["objectId"] as? String : nil, "\(r.text)")
    }

    /// The ids a caller finds, with the count the same request answers and the `limit=0` count.
    private func visible(_ server: TestServer, headers: [String: String] = [:], anonymous: Bool = false) throws
        -> Set<String>
    {
        let page = try F.find(
            server, ["count": "1", "order": "text"], className: "Diary", headers: headers, anonymous: anonymous)
        let ids = Set(F.ids(page))
        #expect(page.json["count"] as? Int == ids.count, "\(page.text)")
        let count = try F.find(
            server, ["count": "1", "limit": "0"], className: "Diary", headers: headers, anonymous: anonymous)
        #expect(count.json["count"] as? Int == ids.count, "\(count.text)")
        return ids
    }

    @Test func acls_DecideReadsAndWrites_AsParseServer() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let alice = try server.makeUser("alice")
        let bob = try server.makeUser("bob")
        let carol = try server.makeUser("carol")
        try publicClass(server, "Diary")
        let editors = try server.json(
            "POST", "/parse/roles",
            [
                "name": "Editors", "ACL": ["*": ["read": true]],
                "users": ["__op": "AddRelation", "objects": [TestServer.pointer("_User", carol.objectId)]],
            ])
        #expect(editors.status == 201, "\(editors.text)")

        // A private ParseACL as the Parse Swift SDK sends it (`ParseACL` with read and write for one user).
        let secret = try create(
            server, ["text": "a secret", "ACL": [alice.objectId: ["read": true, "write": true]]], alice)
        let open = try create(server, ["text": "b open"], alice)  // no ACL: public read and write
        let readOnly = try create(server, ["text": "c read only", "ACL": ["*": ["read": true]]], alice)
        let forEditors = try create(
            server, ["text": "d editors", "ACL": ["role:Editors": ["read": true, "write": true]]], alice)
        let nobody = try create(server, ["text": "e nobody", "ACL": [String: Any]()], alice)

        // Reads: find, count and get agree.
        #expect(try visible(server) == [secret, open, readOnly, forEditors, nobody])  // the master key
        #expect(try visible(server, headers: alice.headers) == [secret, open, readOnly])
        #expect(try visible(server, headers: bob.headers) == [open, readOnly])
        #expect(try visible(server, headers: carol.headers) == [open, readOnly, forEditors])
        #expect(try visible(server, anonymous: true) == [open, readOnly])
        let stolen = try server.request("GET", "/parse/classes/Diary/\(secret)", headers: bob.headers)
        #expect(F.code(stolen) == 101 && !stolen.text.contains("secret"), "\(stolen.text)")
        #expect(try server.request("GET", "/parse/classes/Diary/\(secret)", headers: alice.headers).status == 200)
        #expect(try server.request("GET", "/parse/classes/Diary/\(forEditors)", headers: carol.headers).status == 200)
        #expect(F.code(try server.request("GET", "/parse/classes/Diary/\(nobody)", headers: alice.headers)) == 101)
        let whereSecret = try F.find(
            server, ["where": F.json(["text": "a secret"])], className: "Diary", headers: bob.headers)
        #expect(F.ids(whereSecret).isEmpty, "\(whereSecret.text)")

        // Writes: 101 without write, nothing changed; the grantees may.
        #expect(
            F.code(try server.json("PUT", "/parse/classes/Diary/\(secret)", ["text": "x"], headers: bob.headers))
                == 101)
        #expect(F.code(try server.request("DELETE", "/parse/classes/Diary/\(secret)", headers: bob.headers)) == 101)
        #expect(
            F.code(try server.json("PUT", "/parse/classes/Diary/\(readOnly)", ["text": "x"], headers: bob.headers))
                == 101)
        #expect(
            F.code(try server.json("PUT", "/parse/classes/Diary/\(readOnly)", ["ACL": NSNull()], headers: bob.headers))
                == 101)
        #expect(F.code(try server.request("DELETE", "/parse/classes/Diary/\(readOnly)", anonymous: true)) == 101)
        #expect(try server.request("GET", "/parse/classes/Diary/\(secret)").json["text"] as? String == "a secret")
        #expect(try server.request("GET", "/parse/classes/Diary/\(readOnly)").json["text"] as? String == "c read only")
        #expect(
            try server.json("PUT", "/parse/classes/Diary/\(open)", ["text": "b open 2"], anonymous: true).status == 200)
        #expect(
            try server.json("PUT", "/parse/classes/Diary/\(forEditors)", ["text": "d 2"], headers: carol.headers)
                .status == 200)
        #expect(try server.request("DELETE", "/parse/classes/Diary/\(secret)", headers: alice.headers).status == 200)
        #expect(try server.request("DELETE", "/parse/classes/Diary/\(nobody)").status == 200)  // the master key

        // Sharing by changing the ACL: bob reads it at once, then loses it again.
        _ = try server.json(
            "PUT", "/parse/classes/Diary/\(forEditors)", ["ACL": [bob.objectId: ["read": true]]],
            headers: carol.headers)
        #expect(try visible(server, headers: bob.headers) == [open, readOnly, forEditors])
        #expect(try visible(server, headers: carol.headers) == [open, readOnly])
    }

    @Test func malformedACL_Is123_AndNothingIsWritten() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let alice = try server.makeUser("alice")
        try publicClass(server, "Diary")
        let id = try create(server, ["text": "kept", "ACL": [alice.objectId: ["read": true, "write": true]]], alice)
        let bad: [Any] = [
            [alice.objectId: ["read": "yes"]], [1, 2], "public", ["no such key!": ["read": true]],
            [alice.objectId: ["read": true, "delete": true]], ["role:": ["read": true]], [alice.objectId: true],
        ]
        for acl in bad {
            let created = try server.json(
                "POST", "/parse/classes/Diary", ["text": "x", "ACL": acl], headers: alice.headers)
            #expect(created.status == 400 && F.code(created) == 123, "\(acl): \(created.text)")
            let updated = try server.json(
                "PUT", "/parse/classes/Diary/\(id)", ["text": "x", "ACL": acl], headers: alice.headers)
            #expect(updated.status == 400 && F.code(updated) == 123, "\(acl): \(updated.text)")
        }
        let kept = try server.request("GET", "/parse/classes/Diary/\(id)", headers: alice.headers)
        #expect(kept.json["text"] as? String == "kept", "\(kept.text)")
        #expect(try F.find(server, ["count": "1", "limit": "0"], className: "Diary").json["count"] as? Int == 1)
    }

    @Test func liveQueryReadable_FollowsTheObjectACL() throws {
        let diary = CustomClass(
            className: "Diary", tableId: 1, fields: [], nextColumn: 1, permissions: .public, indexes: [])
        let event = LiveQueryEvent(schema: diary.schema, operation: .insert, old: nil, new: nil)
        let bob = ParseAccess(caller: .user(objectId: "bobBBBBBBB"), roleNames: ["Editors"])
        #expect(event.readable(["acl": NSNull()], by: bob))
        #expect(event.readable([:], by: ParseAccess(caller: .anonymous)))
        #expect(event.readable(["acl": ["role:Editors": ["read": true]]], by: bob))
        #expect(event.readable(["acl": ["*": ["read": true]]], by: ParseAccess(caller: .anonymous)))
        #expect(!event.readable(["acl": ["aliceAAAAA": ["read": true]]], by: bob))
        #expect(!event.readable(["acl": ["bobBBBBBBB": ["write": true]]], by: bob))
        #expect(!event.readable(["acl": [String: Any]()], by: ParseAccess(caller: .anonymous)))
        #expect(event.readable(["acl": [String: Any]()], by: .master))
    }
}
