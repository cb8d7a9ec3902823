import Foundation
import Testing

@testable import GalleryApp

/// Roles (issue #27, item 2): `_Role` through `/roles` and `/classes/_Role` with the bodies the
/// Parse Swift SDK sends (`ParseRole` saved with `users.add(...)`: an `AddRelation` of `_User`
/// pointers), role names in ACLs, inheritance through the `roles` relation, cycles, and the
/// failure paths (Parse codes, never a 500).
struct RoleTests {
    private typealias F = ManifestFixtures

    /// `ParseRole<User>(name:acl:)` with `users.add([user])`, saved with the master key: the body
    /// Parse-Swift sends to `POST /roles`.
    private func createRole(
        _ server: TestServer, _ name: String, users: [String] = [], roles: [String] = [],
        acl: [String: Any] = ["*": ["read": true]], headers: [String: String] = [:]
    ) throws -> TestServer.Response {
        var body: [String: Any] = ["name": name, "ACL": acl]
        if !users.isEmpty {
            body["users"] = ["__op": "AddRelation", "objects": users.map { TestServer.pointer("_User", $0) }]
        }
        if !roles.isEmpty {
            body["roles"] = ["__op": "AddRelation", "objects": roles.map { TestServer.pointer("_Role", $0) }]
        }
        return try server.json("POST", "/parse/roles", body, headers: headers)
    }

    private func roleId(_ response: TestServer.Response) throws -> String {
        try #require(
            response.status == 201 ? response.json["objectId"] as? String : nil, "\(response.status) \(response.text)")
    }

    private func gallery(_ server: TestServer, acl: [String: Any], _ owner: TestUser) throws -> String {
        let r = try server.json("POST", "/parse/classes/Gallery", ["name": "g", "ACL": acl], headers: owner.headers)
        return try #require(r.json["objectId"] as? String, "\(r.text)")
    }

    private func readable(_ server: TestServer, _ className: String, _ id: String, _ user: TestUser) throws -> Bool {
        let r = try server.request("GET", "/parse/classes/\(className)/\(id)", headers: user.headers)
        #expect(r.status == 200 || F.code(r) == 101, "\(r.text)")
        return r.status == 200
    }

    @Test func sdkRole_WithUsersAdd_GrantsItsMembersWhatACLsGiveTheRole() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let alice = try server.makeUser("alice")
        let bob = try server.makeUser("bob")
        let carol = try server.makeUser("carol")
        let created = try createRole(server, "Administrator", users: [alice.objectId])
        let admin = try roleId(created)
        #expect(created.header("Location")?.hasSuffix("/parse/roles/\(admin)") == true)

        // A gallery of bob's granting the role read: alice (a member) reads it, carol does not.
        let shared = try gallery(server, acl: ["role:Administrator": ["read": true]], bob)
        #expect(try readable(server, "Gallery", shared, alice))
        #expect(try !readable(server, "Gallery", shared, carol))
        #expect(F.ids(try F.find(server, className: "Gallery", headers: alice.headers)) == [shared])
        #expect(
            try F.find(server, ["count": "1", "limit": "0"], className: "Gallery", headers: alice.headers).json["count"]
                as? Int == 1)

        // The role as the SDK fetches it, by both paths; a query on its users relation.
        for path in ["/parse/roles/\(admin)", "/parse/classes/_Role/\(admin)"] {
            let got = try server.request("GET", path, headers: alice.headers)
            #expect(got.json["name"] as? String == "Administrator", "\(got.text)")
            #expect((got.json["users"] as? [String: Any])?["__type"] as? String == "Relation")
        }
        let byMember = F.json(["users": TestServer.pointer("_User", alice.objectId)])
        let roles = try server.request(
            "GET", "/parse/classes/_Role?where=" + TestServer.queryValue(byMember), headers: alice.headers)
        #expect(F.ids(roles) == [admin], "\(roles.text)")
        let related = F.json(["$relatedTo": ["object": TestServer.pointer("_Role", admin), "key": "users"]])
        let members = try server.request(
            "GET", "/parse/users?where=" + TestServer.queryValue(related), headers: bob.headers)
        #expect(F.ids(members) == [alice.objectId], "\(members.text)")

        // RemoveRelation takes the grant away at once (this instance forgets the memberships).
        let removed = try server.json(
            "PUT", "/parse/roles/\(admin)",
            ["users": ["__op": "RemoveRelation", "objects": [TestServer.pointer("_User", alice.objectId)]]])
        #expect(removed.status == 200, "\(removed.text)")
        #expect(try !readable(server, "Gallery", shared, alice))
    }

    @Test func roleInheritance_GivesTheParentRole_AndCyclesAreHarmless() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let alice = try server.makeUser("alice")
        let bob = try server.makeUser("bob")
        let moderators = try roleId(try createRole(server, "Moderators", users: [alice.objectId]))
        // Moderators is in Administrators' roles relation: its users have Administrators.
        let admins = try roleId(try createRole(server, "Administrators", roles: [moderators]))
        let shared = try gallery(server, acl: ["role:Administrators": ["read": true]], bob)
        #expect(try readable(server, "Gallery", shared, alice))
        #expect(
            try server.application.sessions.roles.roleNames(forUser: alice.objectId) == [
                "Administrators", "Moderators",
            ])

        // A cycle (Administrators in Moderators, and a role in itself): same answer, no hang.
        let cycle = try server.json(
            "PUT", "/parse/classes/_Role/\(moderators)",
            [
                "roles": [
                    "__op": "AddRelation",
                    "objects": [TestServer.pointer("_Role", admins), TestServer.pointer("_Role", moderators)],
                ]
            ])
        #expect(cycle.status == 200, "\(cycle.text)")
        #expect(
            try server.application.sessions.roles.roleNames(forUser: alice.objectId) == [
                "Administrators", "Moderators",
            ])
        #expect(try readable(server, "Gallery", shared, alice))
        #expect(try server.application.sessions.roles.roleNames(forUser: bob.objectId).isEmpty)
        let children = F.json(["$relatedTo": ["object": TestServer.pointer("_Role", admins), "key": "roles"]])
        #expect(
            F.ids(try server.request("GET", "/parse/roles?where=" + TestServer.queryValue(children))) == [moderators])
    }

    @Test func roleWrites_AreRefusedWithParseCodes() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let alice = try server.makeUser("alice")
        let bob = try server.makeUser("bob")
        for bad in ["", "Admin!", "a/b", "rôle", String(repeating: "x", count: 200)] {
            let r = try createRole(server, bad)
            #expect(r.status == 400 && F.code(r) == 142, "\(bad): \(r.text)")
        }
        #expect(try createRole(server, "Editors Team_1-b").status == 201)
        let duplicate = try createRole(server, "Editors Team_1-b")
        #expect(duplicate.status == 400 && F.code(duplicate) == 137, "\(duplicate.text)")
        let noACL = try server.json("POST", "/parse/roles", ["name": "NoACL"])
        #expect(F.code(noACL) == 123, "\(noACL.text)")
        for acl: Any in ["public", ["*": true], ["role:Bad!": ["read": true]], ["*": ["read": 1]]] {
            let r = try server.json("POST", "/parse/roles", ["name": "Shape", "ACL": acl])
            #expect(r.status == 400 && F.code(r) == 123, "\(acl): \(r.text)")
        }
        let wrongClass = try server.json(
            "POST", "/parse/roles",
            [
                "name": "W", "ACL": [:] as [String: Any],
                "users": ["__op": "AddRelation", "objects": [TestServer.pointer("_Role", "abcdefghij")]],
            ])
        #expect(F.code(wrongClass) == 111, "\(wrongClass.text)")
        let noSuchUser = try createRole(server, "Ghosts", users: ["nosuchuser"])
        #expect(F.code(noSuchUser) == 106, "\(noSuchUser.text)")
        #expect(
            F.code(try server.json("POST", "/parse/roles", ["name": "X", "ACL": [:] as [String: Any], "power": 1]))
                == 105)

        // Only the master key creates; a role's ACL decides who changes it; the name never changes.
        let byUser = try createRole(server, "Mine", headers: alice.headers)
        #expect(byUser.status == 400 && F.code(byUser) == 119, "\(byUser.text)")
        let editors = try roleId(
            try createRole(server, "Editors", acl: ["*": ["read": true], alice.objectId: ["write": true]]))
        let grab = ["users": ["__op": "AddRelation", "objects": [TestServer.pointer("_User", bob.objectId)]]]
        #expect(F.code(try server.json("PUT", "/parse/roles/\(editors)", grab, headers: bob.headers)) == 101)
        #expect(F.code(try server.request("DELETE", "/parse/roles/\(editors)", headers: bob.headers)) == 101)
        #expect(try server.json("PUT", "/parse/roles/\(editors)", grab, headers: alice.headers).status == 200)
        let rename = try server.json("PUT", "/parse/roles/\(editors)", ["name": "Owners"])
        #expect(rename.status == 400 && F.code(rename) == 142, "\(rename.text)")
        #expect(try server.json("PUT", "/parse/roles/\(editors)", ["name": "Editors"]).status == 200)
        let hidden = try roleId(try createRole(server, "Hidden", acl: [:]))
        #expect(F.code(try server.request("GET", "/parse/roles/\(hidden)", headers: alice.headers)) == 101)
        #expect(F.code(try server.request("GET", "/parse/roles/not%20an%20id")) == 101)
        #expect(F.code(try server.request("GET", "/parse/roles?where=" + TestServer.queryValue(#"{"ACL":1}"#))) == 102)
        #expect(try server.request("DELETE", "/parse/roles/\(editors)", headers: alice.headers).status == 200)
    }
}
