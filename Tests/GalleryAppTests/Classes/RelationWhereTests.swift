import Foundation
import Testing

@testable import GalleryApp

/// A `where` on a Relation field (docs/decisions/046), as Parse Server's `reduceInRelation`:
/// `{"likes":<pointer>}`, `$eq`, `$in`, `$nin`, `$ne` (and `$all`) find the objects whose relation
/// holds (or not) those objects; a target the caller may not read is held by no object, so the
/// answer never tells that it exists or who holds it.
@Suite struct RelationWhereTests {
    private typealias F = ManifestFixtures

    private func created(_ response: TestServer.Response) throws -> String {
        try #require(response.status == 201 ? response.json["objectId"] as? String : nil, "\(response.text)")
    }

    /// Fan (`name`, `owner` → _User) and Post (`title`, `likes` → Fan, `members` → _User), both open.
    private func classes(_ server: TestServer, fanCLP: [String: Any]? = nil) throws {
        let open: [String: Any] = ["find": ["*": true], "get": ["*": true], "count": ["*": true]]
        for (name, fields) in [
            ("Fan", ["name": ["type": "String"], "owner": ["type": "Pointer", "targetClass": "_User"]]),
            (
                "Post",
                [
                    "title": ["type": "String"], "likes": ["type": "Relation", "targetClass": "Fan"],
                    "members": ["type": "Relation", "targetClass": "_User"],
                ]
            ),
        ] as [(String, [String: Any])] {
            let clp = name == "Fan" ? (fanCLP ?? open) : open
            let made = try server.json(
                "POST", "/parse/schemas/\(name)", ["fields": fields, "classLevelPermissions": clp])
            #expect(made.status == 200, "\(made.text)")
        }
    }

    private func fan(_ server: TestServer, _ name: String, _ extra: [String: Any] = [:]) throws -> String {
        try created(try server.json("POST", "/parse/classes/Fan", extra.merging(["name": name]) { _, new in new }))
    }

    /// A post (made with the master key) titled `title` whose `likes` holds `fans`.
    private func post(_ server: TestServer, _ title: String, likedBy fans: [String], members: [String] = []) throws {
        var body: [String: Any] = [
            "title": title,
            "likes": ["__op": "AddRelation", "objects": fans.map { TestServer.pointer("Fan", $0) }],
        ]
        if !members.isEmpty {
            body["members"] = ["__op": "AddRelation", "objects": members.map { TestServer.pointer("_User", $0) }]
        }
        _ = try created(try server.json("POST", "/parse/classes/Post", body))
    }

    /// The titles of the posts a caller finds with `condition` (checked against the `count` answer).
    private func titles(
        _ server: TestServer, _ condition: [String: Any], headers: [String: String] = [:], anonymous: Bool = false
    ) throws -> [String] {
        let found = try F.find(
            server, ["where": F.json(condition), "count": "1"], className: "Post", headers: headers,
            anonymous: anonymous)
        #expect(found.status == 200, "\(condition): \(found.text)")
        let titles = F.results(found).compactMap { $0["title"] as? String }.sorted()
        #expect(found.json["count"] as? Int == titles.count, "\(found.text)")
        return titles
    }

    private func code(_ server: TestServer, _ condition: Any, headers: [String: String] = [:]) throws -> Int? {
        let found = try F.find(server, ["where": F.json(condition)], className: "Post", headers: headers)
        #expect(found.status != 500, "\(found.text)")
        return F.code(found)
    }

    @Test func compile_WhereOnARelation_ReadsTheJoinTableAndTheTargetsAccess() throws {
        let post = CustomClass(
            className: "Post", tableId: 1,
            fields: [
                CustomClass.Field(
                    name: "likes", type: CustomFieldType(.relation, targetClass: "Fan"), column: nil,
                    joinTable: "custom_1_r1")
            ], nextColumn: 2, permissions: .public, indexes: [])
        let fan = CustomClass(
            className: "Fan", tableId: 2, fields: [], nextColumn: 1, permissions: .public, indexes: [])
        func sql(_ whereText: String, _ target: ParseReadableClass) throws -> String {
            var query = try ParseQuery.find(
                post.schema, items: [("where", whereText)], classes: { name, _ in name == "Fan" ? target : nil })
            query.access = ParseAccess(caller: .user(objectId: "u1"))
            return try #require(ParseSQLCompiler.compile(query).select).sql
        }
        let pointer = #"{"__type":"Pointer","className":"Fan","objectId":"f1"}"#
        let held = try sql(#"{"likes":\#(pointer)}"#, ParseReadableClass(schema: fan.schema))
        #expect(
            held.contains(
                "t.object_id in (select j1.owning_id from custom_1_r1 j1 where j1.related_id = $1::text and $1::text in"
                    + " (select s2.object_id from custom_2 s2 where s2.object_id = $2::text and s2.readers && $3::text[]))"
            ), "\(held)")
        let notHeld = try sql(#"{"likes":{"$ne":\#(pointer)}}"#, ParseReadableClass(schema: fan.schema))
        #expect(notHeld.contains("not (t.object_id in (select j1.owning_id"), "\(notHeld)")
        // A target class the caller may not get holds nothing.
        let refused = try sql(#"{"likes":\#(pointer)}"#, ParseReadableClass(schema: fan.schema, refused: true))
        #expect(refused.contains("where false and"), "\(refused)")
        let many = "[" + Array(repeating: pointer, count: 1_001).joined(separator: ",") + "]"
        #expect(throws: ParseError.self) {
            try sql(#"{"likes":{"$in":\#(many)}}"#, ParseReadableClass(schema: fan.schema))
        }
        #expect(throws: ParseError.self) {  // where no class resolver is given (102)
            _ = try ParseQuery.find(post.schema, items: [("where", #"{"likes":\#(pointer)}"#)])
        }
    }

    @Test func whereOnARelation_FindsTheObjectsThatHoldOrDoNotHoldTheTargets() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        try classes(server)
        let f1 = try fan(server, "f1")
        let f2 = try fan(server, "f2")
        let f3 = try fan(server, "f3")
        try post(server, "p1", likedBy: [f1, f2])
        try post(server, "p2", likedBy: [f2])
        try post(server, "p3", likedBy: [])
        func p(_ id: String) -> [String: Any] { TestServer.pointer("Fan", id) }

        #expect(try titles(server, ["likes": p(f1)]) == ["p1"])
        #expect(try titles(server, ["likes": ["$eq": p(f2)]]) == ["p1", "p2"])
        #expect(try titles(server, ["likes": ["$in": [p(f1), p(f3)]]]) == ["p1"])
        #expect(try titles(server, ["likes": ["$in": [p(f3)]]]).isEmpty)
        #expect(try titles(server, ["likes": ["$in": [Any]()]]).isEmpty)
        #expect(try titles(server, ["likes": ["$nin": [p(f1)]]]) == ["p2", "p3"])
        #expect(try titles(server, ["likes": ["$nin": [p(f1), p(f2)]]]) == ["p3"])
        #expect(try titles(server, ["likes": ["$ne": p(f2)]]) == ["p3"])
        #expect(try titles(server, ["likes": ["$all": [p(f1), p(f2)]]]) == ["p1"])
        #expect(try titles(server, ["likes": ["$all": [p(f2)]]]) == ["p1", "p2"])
        #expect(try titles(server, ["likes": ["$all": [Any]()]]).isEmpty)
        #expect(try titles(server, ["likes": p(f2), "title": "p2"]) == ["p2"])
        let either: [String: Any] = ["$or": [["likes": p(f1)], ["title": "p3"]] as [Any]]
        #expect(try titles(server, either) == ["p1", "p3"])
        let inButNot: [String: Any] = ["likes": ["$in": [p(f2)], "$ne": p(f1)] as [String: Any]]
        #expect(try titles(server, inButNot) == ["p2"])

        // Bad shapes: 102 (106 for a pointer to another class or a malformed one), never a 500.
        let bad: [Any] = [
            ["likes": f1], ["likes": NSNull()], ["likes": ["$exists": true]], ["likes": ["$in": p(f1)]],
            ["likes": ["$lt": p(f1)]], ["likes": [String: Any]()], ["likes": ["$in": [f1]]],
            ["likes": ["$relatedTo": p(f1)]],
        ]
        for bad in bad {
            #expect(try code(server, bad) == 102, "\(bad)")
        }
        #expect(try code(server, ["likes": TestServer.pointer("Post", f1)]) == 106)
        #expect(try code(server, ["likes": ["__type": "Pointer", "className": "Fan", "objectId": "../x"]]) == 106)

        // Aggregate's $match takes it too (the master key's).
        let aggregated = try server.request(
            "GET",
            "/parse/aggregate/Post?pipeline="
                + TestServer.queryValue(
                    F.json([["$match": ["likes": p(f2)]], ["$group": ["_id": NSNull(), "n": ["$sum": 1]]]])))
        #expect(F.results(aggregated).first?["n"] as? Int == 2, "\(aggregated.text)")
    }

    @Test func whereOnARelation_NeverTellsOfATargetTheCallerMayNotRead() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let alice = try server.makeUser("alice")
        let bob = try server.makeUser("bob")
        try classes(server)
        let open = try fan(server, "open")
        let secret = try fan(server, "secret", ["ACL": [alice.objectId: ["read": true]]])
        try post(server, "liked", likedBy: [open, secret], members: [alice.objectId])
        try post(server, "other", likedBy: [open])
        let secretPointer = TestServer.pointer("Fan", secret)

        #expect(try titles(server, ["likes": secretPointer]) == ["liked"])  // the master key
        #expect(try titles(server, ["likes": secretPointer], headers: alice.headers) == ["liked"])
        // The attacker knows the private fan's id: no post holds it, so none tells it exists.
        #expect(try titles(server, ["likes": secretPointer], headers: bob.headers).isEmpty)
        #expect(try titles(server, ["likes": ["$in": [secretPointer]]], headers: bob.headers).isEmpty)
        #expect(try titles(server, ["likes": ["$all": [secretPointer]]], headers: bob.headers).isEmpty)
        #expect(try titles(server, ["likes": ["$ne": secretPointer]], headers: bob.headers) == ["liked", "other"])
        #expect(try titles(server, ["likes": ["$nin": [secretPointer]]], headers: bob.headers) == ["liked", "other"])
        #expect(try titles(server, ["likes": secretPointer], anonymous: true).isEmpty)
        #expect(try titles(server, ["likes": TestServer.pointer("Fan", open)], anonymous: true) == ["liked", "other"])

        // A Relation to _User: accounts are readable by users, not by the app id alone.
        let alicePointer = TestServer.pointer("_User", alice.objectId)
        #expect(try titles(server, ["members": alicePointer], headers: bob.headers) == ["liked"])
        #expect(try titles(server, ["members": alicePointer], anonymous: true).isEmpty)
        #expect(try titles(server, ["members": ["$ne": alicePointer]], anonymous: true) == ["liked", "other"])

        // A protected relation is 119 whatever the list, as a where on any protected field.
        #expect(
            try server.json(
                "PUT", "/parse/schemas/Post",
                ["classLevelPermissions": ["find": ["*": true], "protectedFields": ["*": ["likes"]]]]
            ).status == 200)
        #expect(try code(server, ["likes": TestServer.pointer("Fan", open)], headers: bob.headers) == 119)
        #expect(try code(server, ["likes": ["$in": [Any]()]], headers: bob.headers) == 119)
        #expect(try titles(server, ["likes": TestServer.pointer("Fan", open)]) == ["liked", "other"])
    }

    @Test func whereOnARelation_FollowsTheTargetClassPermissions() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let alice = try server.makeUser("alice")
        let bob = try server.makeUser("bob")
        // Fans are read through their `owner` alone (pointer permission), as a get of them needs.
        try classes(server, fanCLP: ["find": [String: Any](), "get": [String: Any](), "readUserFields": ["owner"]])
        let bobs = try fan(server, "b", ["owner": TestServer.pointer("_User", bob.objectId)])
        let alices = try fan(server, "a", ["owner": TestServer.pointer("_User", alice.objectId)])
        try post(server, "both", likedBy: [bobs, alices])
        try post(server, "alice", likedBy: [alices])
        let bobsPointer = TestServer.pointer("Fan", bobs)
        let alicesPointer = TestServer.pointer("Fan", alices)
        #expect(try titles(server, ["likes": alicesPointer], headers: alice.headers) == ["alice", "both"])
        #expect(try titles(server, ["likes": alicesPointer], headers: bob.headers).isEmpty)
        #expect(try titles(server, ["likes": ["$in": [alicesPointer, bobsPointer]]], headers: bob.headers) == ["both"])
        #expect(try titles(server, ["likes": alicesPointer], anonymous: true).isEmpty)

        // The class's get refused outright: it holds nothing for the caller (200, not 119).
        #expect(
            try server.json(
                "PUT", "/parse/schemas/Fan",
                ["classLevelPermissions": ["find": ["*": true], "get": [String: Any](), "readUserFields": []]]
            ).status == 200)
        let refused = try F.find(
            server, ["where": F.json(["likes": bobsPointer])], className: "Post", headers: bob.headers)
        #expect(refused.status == 200 && F.results(refused).isEmpty, "\(refused.text)")
        #expect(try titles(server, ["likes": bobsPointer]) == ["both"])
    }

    @Test func liveQuery_RefusesAWhereOnARelation() throws {
        let post = CustomClass(
            className: "Post", tableId: 1,
            fields: [
                CustomClass.Field(
                    name: "likes", type: CustomFieldType(.relation, targetClass: "Fan"), column: nil,
                    joinTable: "custom_1_r1")
            ], nextColumn: 2, permissions: .public, indexes: [])
        #expect(throws: LiveQueryError.self) {
            try LiveQueryMatcher.compile(["likes": TestServer.pointer("Fan", "f1")], schema: post.schema)
        }
    }
}
