import Foundation
import Testing

@testable import GalleryApp

/// Class-level permissions that name a role (`role:Administrator`), as ToyPhotoGallery's README
/// sets its `Resource` class up: public read, writes for the `Administrator` role. The roles come
/// from the `_Role` engine (`ParseAccess.roleNames`, inheritance included).
@Suite struct ClassRolePermissionTests {
    private func createRole(_ server: TestServer, _ name: String, users: [String] = [], roles: [String] = []) throws
        -> String
    {
        var body: [String: Any] = ["name": name, "ACL": ["*": ["read": true]]]
        if !users.isEmpty {
            body["users"] = ["__op": "AddRelation", "objects": users.map { TestServer.pointer("_User", $0) }]
        }
        if !roles.isEmpty {
            body["roles"] = ["__op": "AddRelation", "objects": roles.map { TestServer.pointer("_Role", $0) }]
        }
        let created = try server.json("POST", "/parse/roles", body)
        return try #require(created.status == 201 ? created.json["objectId"] as? String : nil, "\(created.text)")
    }

    @Test func roleEntries_GrantTheirMembers_AndInheritedRoles_AndNobodyElse() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let alice = try server.makeUser("alice")
        let bob = try server.makeUser("bob")
        let carol = try server.makeUser("carol")
        let schema = try server.json(
            "POST", "/parse/schemas/Resource",
            [
                "fields": ["filename": ["type": "String"]],
                "classLevelPermissions": [
                    "find": ["*": true], "get": ["*": true], "count": ["*": true],
                    "create": ["role:Administrator": true], "update": ["role:Administrator": true],
                    "delete": ["role:Administrator": true], "addField": [:] as [String: Any],
                ],
            ])
        #expect(schema.status == 200, "\(schema.text)")
        // alice is an Administrator; bob is in Editors, which is in Administrator's roles.
        let editors = try createRole(server, "Editors", users: [bob.objectId])
        _ = try createRole(server, "Administrator", users: [alice.objectId], roles: [editors])

        let byAlice = try server.json("POST", "/parse/classes/Resource", ["filename": "a.jpg"], headers: alice.headers)
        #expect(byAlice.status == 201, "\(byAlice.text)")
        let byBob = try server.json("POST", "/parse/classes/Resource", ["filename": "b.jpg"], headers: bob.headers)
        #expect(byBob.status == 201, "\(byBob.text)")
        let byCarol = try server.json("POST", "/parse/classes/Resource", ["filename": "c.jpg"], headers: carol.headers)
        #expect(byCarol.json["code"] as? Int == 119, "\(byCarol.text)")
        let id = try #require(byAlice.json["objectId"] as? String)
        let carolUpdate = try server.json(
            "PUT", "/parse/classes/Resource/\(id)", ["filename": "x.jpg"], headers: carol.headers)
        #expect(carolUpdate.json["code"] as? Int == 119, "\(carolUpdate.text)")
        let bobUpdate = try server.json(
            "PUT", "/parse/classes/Resource/\(id)", ["filename": "y.jpg"], headers: bob.headers)
        #expect(bobUpdate.status == 200, "\(bobUpdate.text)")
        // The role grants no new field (addField is nobody's).
        let newField = try server.json("PUT", "/parse/classes/Resource/\(id)", ["extra": 1], headers: alice.headers)
        #expect(newField.json["code"] as? Int == 119, "\(newField.text)")
        // Reads are public: carol, and the app id alone, find both rows.
        let found = try server.request("GET", "/parse/classes/Resource?order=filename", headers: carol.headers)
        #expect(
            (found.json["results"] as? [[String: Any]])?.map { $0["filename"] as? String } == ["b.jpg", "y.jpg"],
            "\(found.text)")
        let carolDelete = try server.request("DELETE", "/parse/classes/Resource/\(id)", headers: carol.headers)
        #expect(carolDelete.json["code"] as? Int == 119, "\(carolDelete.text)")
        #expect(try server.request("DELETE", "/parse/classes/Resource/\(id)", headers: alice.headers).status == 200)
    }
}
