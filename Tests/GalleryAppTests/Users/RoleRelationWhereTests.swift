import Foundation
import Testing

@testable import GalleryApp

/// `users` and `roles` in a `_Role` find, as a `where` on any Relation (docs/decisions/046): a
/// pointer, `$in`, `$nin`, `$ne`, `$all`; a target the caller may not read is held by no role.
struct RoleRelationWhereTests {
    private typealias F = ManifestFixtures

    private func role(
        _ server: TestServer, _ name: String, users: [String] = [], roles: [String] = [],
        acl: [String: Any] = ["*": ["read": true]]
    ) throws -> String {
        var body: [String: Any] = ["name": name, "ACL": acl]
        if !users.isEmpty {
            body["users"] = ["__op": "AddRelation", "objects": users.map { TestServer.pointer("_User", $0) }]
        }
        if !roles.isEmpty {
            body["roles"] = ["__op": "AddRelation", "objects": roles.map { TestServer.pointer("_Role", $0) }]
        }
        let made = try server.json("POST", "/parse/roles", body)
        return try #require(made.status == 201 ? made.json["objectId"] as? String : nil, "\(made.text)")
    }

    /// The names of the roles a caller finds with `condition`, checked against the `count` answer.
    private func names(_ server: TestServer, _ condition: Any, headers: [String: String] = [:]) throws -> [String] {
        let found = try server.request(
            "GET", "/parse/roles?count=1&where=" + TestServer.queryValue(F.json(condition)), headers: headers)
        #expect(found.status == 200, "\(condition): \(found.text)")
        let names = F.results(found).compactMap { $0["name"] as? String }.sorted()
        #expect(found.json["count"] as? Int == names.count, "\(found.text)")
        return names
    }

    @Test func roleFind_OnUsersAndRoles_TakesTheRelationOperators_AndHidesWhatTheCallerMayNotRead() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let alice = try server.makeUser("alice")
        let bob = try server.makeUser("bob")
        let hidden = try role(server, "Hidden", acl: [String: Any]())
        _ = try role(server, "Admins", users: [alice.objectId])
        _ = try role(server, "Editors", users: [alice.objectId, bob.objectId])
        _ = try role(server, "Parent", roles: [hidden])
        let a = TestServer.pointer("_User", alice.objectId)
        let b = TestServer.pointer("_User", bob.objectId)

        #expect(try names(server, ["users": a], headers: bob.headers) == ["Admins", "Editors"])
        #expect(try names(server, ["users": ["$eq": b]], headers: bob.headers) == ["Editors"])
        #expect(try names(server, ["users": ["$in": [b, a]]], headers: bob.headers) == ["Admins", "Editors"])
        #expect(try names(server, ["users": ["$nin": [a]]], headers: bob.headers) == ["Parent"])
        #expect(try names(server, ["users": ["$ne": b]], headers: bob.headers) == ["Admins", "Parent"])
        #expect(try names(server, ["users": ["$all": [a, b]]], headers: bob.headers) == ["Editors"])
        #expect(try names(server, ["users": ["$in": [Any]()]], headers: bob.headers).isEmpty)
        // Hidden is the master key's: no role holds it for bob, so none tells it exists.
        let h = TestServer.pointer("_Role", hidden)
        #expect(try names(server, ["roles": h]) == ["Parent"])
        #expect(try names(server, ["roles": h], headers: bob.headers).isEmpty)
        #expect(try names(server, ["roles": ["$ne": h]], headers: bob.headers) == ["Admins", "Editors", "Parent"])

        let bad: [Any] = [
            ["users": ["$exists": true]], ["users": alice.objectId], ["users": TestServer.pointer("_Role", hidden)],
            ["users": ["$in": a]], ["users": [String: Any]()], ["roles": ["$lt": h]],
        ]
        for bad in bad {
            let r = try server.request("GET", "/parse/roles?where=" + TestServer.queryValue(F.json(bad)))
            #expect(r.status == 400 && F.code(r) == 102, "\(bad): \(r.text)")
        }
    }
}
