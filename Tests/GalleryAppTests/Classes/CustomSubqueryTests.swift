import Foundation
import Testing

@testable import GalleryApp

/// `$inQuery`, `$notInQuery`, `$select`, `$dontSelect` and `$containedBy` on custom and built-in
/// classes: one statement with SQL subqueries, over the rows the caller may read of each class;
/// Parse Server's errors for a subquery it refuses (102, 103, 119).
struct CustomSubqueryTests {
    /// The answer to a find of `className` with `where`.
    static func find(
        _ server: TestServer, _ className: String, _ whereObject: Any, headers: [String: String] = [:],
        extra: String = ""
    ) throws -> TestServer.Response {
        let text = String(decoding: try JSONSerialization.data(withJSONObject: whereObject), as: UTF8.self)
        let encoded = text.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        return try server.request("GET", "/parse/classes/\(className)?where=\(encoded)\(extra)", headers: headers)
    }

    /// The `name` of each result, sorted.
    static func names(_ response: TestServer.Response) -> [String] {
        ((response.json["results"] as? [[String: Any]]) ?? []).compactMap { $0["name"] as? String }.sorted()
    }

    private func created(_ response: TestServer.Response) throws -> String {
        try #require(response.json["objectId"] as? String, "\(response.status) \(response.text)")
    }

    /// Teams Oslo (A) and Rome (B); players p1 (A, from Oslo), p2 (B, from Paris), p3 (no team, from Rome).
    private func league(_ server: TestServer) throws {
        #expect(
            try server.json(
                "POST", "/parse/schemas/Team",
                ["fields": ["name": ["type": "String"], "city": ["type": "String"]]]
            ).status == 200)
        let a = try created(try server.json("POST", "/parse/classes/Team", ["name": "A", "city": "Oslo"]))
        let b = try created(try server.json("POST", "/parse/classes/Team", ["name": "B", "city": "Rome"]))
        func team(_ id: String) -> [String: Any] { ["__type": "Pointer", "className": "Team", "objectId": id] }
        let players: [[String: Any]] = [
            ["name": "p1", "team": team(a), "hometown": "Oslo", "tags": ["a"]],
            ["name": "p2", "team": team(b), "hometown": "Paris", "tags": ["a", "b"]],
            ["name": "p3", "hometown": "Rome", "tags": ["c"]],
        ]
        for player in players { _ = try created(try server.json("POST", "/parse/classes/Player", player)) }
    }

    @Test func compile_SubqueriesAreInTheOneStatement_WithTheirClassesAccess() throws {
        func field(_ name: String, _ type: CustomFieldType, _ column: String) -> CustomClass.Field {
            CustomClass.Field(name: name, type: type, column: column)
        }
        let team = CustomClass(
            className: "Team", tableId: 1, fields: [field("city", CustomFieldType(.string), "c1")], nextColumn: 2,
            permissions: .public, indexes: [])
        let player = CustomClass(
            className: "Player", tableId: 2,
            fields: [
                field("team", CustomFieldType(.pointer, targetClass: "Team"), "c1"),
                field("hometown", CustomFieldType(.string), "c2"),
            ], nextColumn: 3, permissions: .public, indexes: [])
        let whereText =
            #"{"team":{"$inQuery":{"className":"Team","where":{"city":"Oslo"}}},"#
            + #""hometown":{"$dontSelect":{"query":{"className":"Photo","where":{}},"key":"title"}}}"#
        var query = try ParseQuery.find(
            player.schema, items: [("where", whereText)],
            classes: { name, _ in
                (name == "Team" ? team.schema : ParseClassSchema.named(name)).map { ParseReadableClass(schema: $0) }
            })
        query.access = ParseAccess(caller: .user(objectId: "u1"))
        let sql = try #require(ParseSQLCompiler.compile(query).select).sql
        // Team's rows this user's object ACLs let them read (CustomObjectACL), as the outer class's.
        #expect(
            sql.contains(
                "t.c1 in (select s1.object_id from custom_1 s1 where s1.c1 = $1::text and s1.readers && $2::text[])"),
            "\(sql)")
        #expect(sql.contains(" and t.readers && $5::text[] "), "\(sql)")
        // Photo's rows for this user only (its access filter), live ones; a null hometown matches.
        #expect(sql.contains("(t.c2 is null or not exists (select 1 from photos s2 where (s2.owner_id = "), "\(sql)")
        #expect(sql.contains("s2.deleted_at is null and s2.title = t.c2))"), "\(sql)")
        #expect(query.subqueries.map(\.schema.className) == ["Team", "Photo"])
        #expect(
            ClassChangeSequences.dependencies(of: query) == ["Custom:Player", "Custom:Team", "Photo:*", "Photo:u1"])
    }

    @Test func subqueries_OnCustomClasses() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        try league(server)
        let oslo: [String: Any] = ["className": "Team", "where": ["city": "Oslo"]]
        #expect(Self.names(try Self.find(server, "Player", ["team": ["$inQuery": oslo]])) == ["p1"])
        // A player without a team is not in any team: $notInQuery matches it, as $nin does.
        #expect(Self.names(try Self.find(server, "Player", ["team": ["$notInQuery": oslo]])) == ["p2", "p3"])
        let cities: [String: Any] = ["query": ["className": "Team", "where": [:] as [String: Any]], "key": "city"]
        #expect(Self.names(try Self.find(server, "Player", ["hometown": ["$select": cities]])) == ["p1", "p3"])
        #expect(Self.names(try Self.find(server, "Player", ["hometown": ["$dontSelect": cities]])) == ["p2"])
        // Nested: players of a team whose city is some player's hometown named p3.
        let nested: [String: Any] = [
            "className": "Team",
            "where": [
                "city": ["$select": ["query": ["className": "Player", "where": ["name": "p3"]], "key": "hometown"]]
            ],
        ]
        #expect(Self.names(try Self.find(server, "Player", ["team": ["$inQuery": nested]])) == ["p2"])
        #expect(Self.names(try Self.find(server, "Player", ["tags": ["$containedBy": ["a", "b"]]])) == ["p1", "p2"])
        // Combined with count, in the one statement.
        let counted = try Self.find(server, "Player", ["team": ["$inQuery": oslo]], extra: "&count=1&limit=0")
        #expect(counted.json["count"] as? Int == 1, "\(counted.text)")
    }

    @Test func subqueries_Refused_AsParseServerRefusesThem() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        try league(server)
        func code(_ whereObject: Any, _ headers: [String: String] = [:]) throws -> Int? {
            try Self.find(server, "Player", whereObject, headers: headers).json["code"] as? Int
        }
        // Malformed: 102.
        #expect(try code(["team": ["$inQuery": ["className": "Team"]]]) == 102)
        #expect(try code(["team": ["$inQuery": ["className": "Team", "where": [:] as [String: Any], "x": 1]]]) == 102)
        #expect(try code(["team": ["$inQuery": ["className": "Team", "where": ["nope": 1]]]]) == 102)
        #expect(try code(["team": ["$inQuery": ["className": "Team", "where": "city"]]]) == 102)
        #expect(try code(["name": ["$inQuery": ["className": "Team", "where": [:] as [String: Any]]]]) == 102)
        #expect(try code(["hometown": ["$select": ["query": ["className": "Team"], "key": "city", "x": 1]]]) == 102)
        #expect(try code(["hometown": ["$select": ["query": ["className": "Team"], "key": "nope"]]]) == 102)
        #expect(try code(["hometown": ["$select": ["query": ["className": "Team"], "key": "createdAt"]]]) == 102)
        #expect(try code(["tags": ["$containedBy": "a"]]) == 102)
        #expect(try code(["name": ["$containedBy": ["a"]]]) == 102)
        // A name no class may have: 103. A class that does not exist: 119 for a user; no rows
        // for the master key (Parse Server finds none).
        #expect(try code(["team": ["$inQuery": ["className": "9bad", "where": [:] as [String: Any]]]]) == 103)
        let ghost: [String: Any] = ["team": ["$inQuery": ["className": "Ghost", "where": [:] as [String: Any]]]]
        #expect(Self.names(try Self.find(server, "Player", ghost)).isEmpty)
        #expect(try Self.find(server, "Player", ghost).status == 200)
        let user = try server.makeUser("carol")
        #expect(
            try server.json(
                "PUT", "/parse/schemas/Player", ["classLevelPermissions": ["find": ["*": true], "get": ["*": true]]]
            ).status == 200)
        #expect(try code(ghost, user.headers) == 119)
        // Team's permissions (the master key's alone) refuse the subquery: 119.
        #expect(
            try code(["team": ["$inQuery": ["className": "Team", "where": [:] as [String: Any]]]], user.headers) == 119)
        #expect(Self.names(try Self.find(server, "Player", ["name": "p1"], headers: user.headers)) == ["p1"])
        // A user may not probe `_User.email` through a subquery.
        let probe: [String: Any] = [
            "name": ["$select": ["query": ["className": "_User", "where": ["email": "a@b.c"]], "key": "username"]]
        ]
        #expect(try code(probe, user.headers) == 119)
    }

    @Test func subqueryOnPhoto_ReadsOnlyTheCallersPhotos() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let alice = try server.makeUser("alice")
        let bob = try server.makeUser("bob")
        let alicePhoto = try #require(try server.insertPhotos(1, owner: alice.objectId).first)
        let bobPhoto = try #require(try server.insertPhotos(1, owner: bob.objectId).first)
        #expect(
            try server.json(
                "POST", "/parse/schemas/Like",
                [
                    "fields": ["name": ["type": "String"], "photo": ["type": "Pointer", "targetClass": "Photo"]],
                    "classLevelPermissions": ["find": ["*": true], "get": ["*": true]],
                ]
            ).status == 200)
        for (name, id) in [("alice's", alicePhoto), ("bob's", bobPhoto)] {
            _ = try created(
                try server.json(
                    "POST", "/parse/classes/Like",
                    ["name": name, "photo": ["__type": "Pointer", "className": "Photo", "objectId": id]]))
        }
        let anyPhoto: [String: Any] = ["photo": ["$inQuery": ["className": "Photo", "where": [:] as [String: Any]]]]
        #expect(Self.names(try Self.find(server, "Like", anyPhoto)) == ["alice's", "bob's"])
        #expect(Self.names(try Self.find(server, "Like", anyPhoto, headers: alice.headers)) == ["alice's"])
        let notMine = try Self.find(
            server, "Like", ["photo": ["$notInQuery": ["className": "Photo", "where": [:] as [String: Any]]]],
            headers: bob.headers)
        #expect(Self.names(notMine) == ["alice's"], "\(notMine.text)")
    }
}
