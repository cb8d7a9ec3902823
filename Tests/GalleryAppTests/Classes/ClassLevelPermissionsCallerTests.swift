import Foundation
import Testing

@testable import GalleryApp

/// Class-level permissions beyond the grants (issue 27 item 3, docs/decisions/036), as Parse
/// Server applies them: `protectedFields` hidden per `*`/`authenticated`/role/user (and a query on
/// one refused), `readUserFields`/`writeUserFields` pointer permissions, `requiresAuthentication`.
@Suite struct ClassLevelPermissionsCallerTests {
    private typealias F = ManifestFixtures
    private static let ops = ["find", "get", "count", "create", "update", "delete"]

    private func makeClass(_ server: TestServer, _ name: String, fields: [String: Any], clp: [String: Any]) throws
        -> TestServer.Response
    {
        try server.json("POST", "/parse/schemas/\(name)", ["fields": fields, "classLevelPermissions": clp])
    }

    @Test func protectedFields_NeverReachTheRestrictedCaller_ButTheMasterKeySeesThem() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let bob = try server.makeUser("bob")
        let carol = try server.makeUser("carol")
        _ = try server.json(
            "POST", "/parse/roles",
            [
                "name": "Staff", "ACL": ["*": ["read": true]],
                "users": ["__op": "AddRelation", "objects": [TestServer.pointer("_User", carol.objectId)]],
            ])
        var clp: [String: Any] = Dictionary(uniqueKeysWithValues: Self.ops.map { ($0, ["*": true]) })
        clp["protectedFields"] = ["*": ["phone", "secret"], "authenticated": ["phone"], "role:Staff": []]
        let made = try makeClass(
            server, "Profile",
            fields: ["name": ["type": "String"], "phone": ["type": "String"], "secret": ["type": "String"]], clp: clp)
        #expect(made.status == 200, "\(made.text)")
        let shown = made.json["classLevelPermissions"] as? [String: Any]
        #expect((shown?["protectedFields"] as? [String: [String]])?["authenticated"] == ["phone"], "\(made.text)")
        let id = try #require(
            try server.json("POST", "/parse/classes/Profile", ["name": "n", "phone": "555", "secret": "s"]).json[
                "objectId"] as? String)

        func seen(headers: [String: String] = [:], anonymous: Bool = false) throws -> Set<String> {
            let got = try server.request("GET", "/parse/classes/Profile/\(id)", headers: headers, anonymous: anonymous)
            let found = F.results(try F.find(server, className: "Profile", headers: headers, anonymous: anonymous))
            let withKeys = F.results(
                try F.find(
                    server, ["keys": "name,phone,secret"], className: "Profile", headers: headers, anonymous: anonymous)
            )
            let fields: Set<String> = ["name", "phone", "secret"]
            let fromGet = fields.intersection(got.json.keys)
            #expect(fromGet == fields.intersection((found.first ?? [:]).keys), "\(got.text)")
            #expect(fromGet == fields.intersection((withKeys.first ?? [:]).keys))
            return fromGet
        }
        #expect(try seen() == ["name", "phone", "secret"])  // the master key
        #expect(try seen(anonymous: true) == ["name"])
        #expect(try seen(headers: bob.headers) == ["name", "secret"])  // `*` ∩ `authenticated`
        #expect(try seen(headers: carol.headers) == ["name", "phone", "secret"])  // ∩ role:Staff's []

        // Querying or sorting by a hidden field is refused (it would tell the value), 119.
        for items in [
            ["where": F.json(["phone": "555"])], ["order": "-secret"], ["where": F.json(["$or": [["secret": "s"]]])],
        ] {
            let refused = try F.find(server, items, className: "Profile", anonymous: true)
            #expect(F.code(refused) == 119 && !refused.text.contains("555"), "\(items): \(refused.text)")
        }
        #expect(
            F.ids(try F.find(server, ["where": F.json(["secret": "s"])], className: "Profile", headers: bob.headers))
                == [id])
        #expect(
            F.code(try F.find(server, ["where": F.json(["phone": "555"])], className: "Profile", headers: bob.headers))
                == 119)

        // A malformed protectedFields is 107 and changes nothing.
        for bad in [["*": "phone"], ["who?": ["phone"]], ["*": [1]], "phone"] as [Any] {
            let put = try server.json(
                "PUT", "/parse/schemas/Profile", ["classLevelPermissions": ["protectedFields": bad]])
            #expect(F.code(put) == 107, "\(bad): \(put.text)")
        }
        #expect(try seen(anonymous: true) == ["name"])
    }

    @Test func hiddenFields_AreTheIntersectionOfTheEntriesThatApply() throws {
        let permissions = try ClassLevelPermissions.parse(
            try ParseJSONParser.parse(
                Array(
                    #"{"protectedFields":{"*":["a","b","c"],"authenticated":["a","b"],"role:R":["a"],"userAAAAAA":["b"]}}"#
                        .utf8),
                maxDepth: 8))
        #expect(permissions.hiddenFields(caller: .anonymous, roles: []) == ["a", "b", "c"])
        #expect(permissions.hiddenFields(caller: .user(objectId: "otherOOOOO"), roles: []) == ["a", "b"])
        #expect(permissions.hiddenFields(caller: .user(objectId: "otherOOOOO"), roles: ["R"]) == ["a"])
        #expect(permissions.hiddenFields(caller: .user(objectId: "userAAAAAA"), roles: ["R"]) == [])
        #expect(permissions.hiddenFields(caller: .master, roles: []) == [])
        #expect(ClassLevelPermissions.public.hiddenFields(caller: .anonymous, roles: []) == [])
    }

    @Test func pointerPermissions_GiveTheUserTheObjectsThatPointToThem() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let alice = try server.makeUser("alice")
        let bob = try server.makeUser("bob")
        let fields: [String: Any] = [
            "title": ["type": "String"], "owner": ["type": "Pointer", "targetClass": "_User"],
        ]
        let clp: [String: Any] = [
            "create": ["*": true], "find": [String: Any](), "get": [String: Any](), "count": [String: Any](),
            "update": [String: Any](), "delete": [String: Any](), "readUserFields": ["owner"],
            "writeUserFields": ["owner"],
        ]
        // The pointer fields must be `_User` pointers of the class: 107, and no class made.
        for bad in [["title"], ["missing"], "owner", [3]] as [Any] {
            var wrong = clp
            wrong["readUserFields"] = bad
            let refused = try makeClass(server, "Doc", fields: fields, clp: wrong)
            #expect(F.code(refused) == 107, "\(bad): \(refused.text)")
            #expect(F.code(try server.request("GET", "/parse/schemas/Doc")) == 103)
        }
        let made = try makeClass(server, "Doc", fields: fields, clp: clp)
        #expect(made.status == 200, "\(made.text)")
        #expect((made.json["classLevelPermissions"] as? [String: Any])?["readUserFields"] as? [String] == ["owner"])
        func doc(_ title: String, _ owner: TestUser) throws -> String {
            let r = try server.json(
                "POST", "/parse/classes/Doc", ["title": title, "owner": TestServer.pointer("_User", owner.objectId)])
            return try #require(r.json["objectId"] as? String, "\(r.text)")
        }
        let hers = try doc("alice's", alice)
        let his = try doc("bob's", bob)

        let page = try F.find(server, ["count": "1"], className: "Doc", headers: alice.headers)
        #expect(F.ids(page) == [hers] && page.json["count"] as? Int == 1, "\(page.text)")
        #expect(
            try F.find(server, ["count": "1", "limit": "0"], className: "Doc", headers: alice.headers).json["count"]
                as? Int == 1)
        #expect(try server.request("GET", "/parse/classes/Doc/\(hers)", headers: alice.headers).status == 200)
        #expect(F.code(try server.request("GET", "/parse/classes/Doc/\(his)", headers: alice.headers)) == 101)
        #expect(
            F.code(try server.json("PUT", "/parse/classes/Doc/\(his)", ["title": "x"], headers: alice.headers)) == 101)
        #expect(F.code(try server.request("DELETE", "/parse/classes/Doc/\(his)", headers: alice.headers)) == 101)
        #expect(
            try server.json("PUT", "/parse/classes/Doc/\(hers)", ["title": "y"], headers: alice.headers).status == 200)
        #expect(try server.request("GET", "/parse/classes/Doc/\(his)").json["title"] as? String == "bob's")

        // Without a session no pointer names the caller: nothing, 101 for a get, a count of 0.
        #expect(F.ids(try F.find(server, className: "Doc", anonymous: true)).isEmpty)
        #expect(
            try F.find(server, ["count": "1", "limit": "0"], className: "Doc", anonymous: true).json["count"] as? Int
                == 0)
        #expect(F.code(try server.request("GET", "/parse/classes/Doc/\(hers)", anonymous: true)) == 101)
        #expect(F.code(try server.request("DELETE", "/parse/classes/Doc/\(hers)", anonymous: true)) == 101)
        #expect(try server.request("DELETE", "/parse/classes/Doc/\(his)", headers: bob.headers).status == 200)
    }

    @Test func requiresAuthentication_Is101WithoutASession() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let alice = try server.makeUser("alice")
        let clp = Dictionary(uniqueKeysWithValues: Self.ops.map { ($0, ["requiresAuthentication": true]) })
        #expect(try makeClass(server, "Club", fields: ["name": ["type": "String"]], clp: clp).status == 200)
        let created = try server.json("POST", "/parse/classes/Club", ["name": "c"], headers: alice.headers)
        let id = try #require(created.json["objectId"] as? String, "\(created.text)")
        #expect(F.ids(try F.find(server, className: "Club", headers: alice.headers)) == [id])
        for response in [
            try F.find(server, className: "Club", anonymous: true),
            try server.request("GET", "/parse/classes/Club/\(id)", anonymous: true),
            try server.json("POST", "/parse/classes/Club", ["name": "x"], anonymous: true),
            try server.json("PUT", "/parse/classes/Club/\(id)", ["name": "x"], anonymous: true),
        ] {
            #expect(F.code(response) == 101 && response.text.contains("authenticated"), "\(response.text)")
        }
        #expect(try F.find(server, ["count": "1", "limit": "0"], className: "Club").json["count"] as? Int == 1)
    }
}
