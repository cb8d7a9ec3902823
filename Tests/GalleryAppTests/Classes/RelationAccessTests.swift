import Foundation
import Testing

@testable import GalleryApp

/// Relation fields as a fetch shows them, and `$relatedTo` read with the owning object's access
/// (docs/decisions/043): Parse Server writes every Relation field of a fetched object as
/// `{"__type":"Relation","className":…}` (with `keys` too), and since GHSA-wmwx-jr2p-4j4r a
/// relation of an owner the caller may not read relates nothing, and a protected one is 119.
@Suite struct RelationAccessTests {
    private typealias F = ManifestFixtures
    private static let relation: [String: String] = ["__type": "Relation", "className": "Fan"]

    private func created(_ response: TestServer.Response) throws -> String {
        try #require(response.status == 201 ? response.json["objectId"] as? String : nil, "\(response.text)")
    }

    /// Fan (public) and Post (`title`, `likes` → Fan, `author` → _User), both readable by anyone.
    private func classes(_ server: TestServer, postCLP: [String: Any]? = nil) throws {
        let open: [String: Any] = ["find": ["*": true], "get": ["*": true], "count": ["*": true]]
        for (name, fields) in [
            ("Fan", ["name": ["type": "String"]]),
            (
                "Post",
                [
                    "title": ["type": "String"], "likes": ["type": "Relation", "targetClass": "Fan"],
                    "author": ["type": "Pointer", "targetClass": "_User"],
                ]
            ),
        ] as [(String, [String: Any])] {
            let clp = name == "Post" ? (postCLP ?? open) : open
            let made = try server.json(
                "POST", "/parse/schemas/\(name)", ["fields": fields, "classLevelPermissions": clp])
            #expect(made.status == 200, "\(made.text)")
        }
    }

    private func fans(_ server: TestServer, _ names: [String]) throws -> [String] {
        try names.map { try created(try server.json("POST", "/parse/classes/Fan", ["name": $0])) }
    }

    /// A post (made with the master key) liked by `fans`, with `extra` fields (an ACL, an author).
    private func post(_ server: TestServer, likedBy fans: [String], _ extra: [String: Any] = [:]) throws -> String {
        var body: [String: Any] = [
            "title": "t",
            "likes": ["__op": "AddRelation", "objects": fans.map { TestServer.pointer("Fan", $0) }],
        ]
        body.merge(extra) { _, new in new }
        return try created(try server.json("POST", "/parse/classes/Post", body))
    }

    /// The names of the fans a caller finds in `post`'s `likes` (with `also` and'ed to the `$relatedTo`).
    private func liked(
        _ server: TestServer, _ post: String, headers: [String: String] = [:], anonymous: Bool = false,
        also: [String: Any] = [:]
    ) throws -> TestServer.Response {
        var condition: [String: Any] = [
            "$relatedTo": ["object": TestServer.pointer("Post", post), "key": "likes"]
        ]
        condition.merge(also) { _, new in new }
        return try F.find(
            server, ["where": F.json(condition), "count": "1"], className: "Fan", headers: headers,
            anonymous: anonymous)
    }

    private func names(_ response: TestServer.Response) -> [String] {
        F.results(response).compactMap { $0["name"] as? String }.sorted()
    }

    @Test func compile_RelatedTo_ReadsItsOwnerWithTheOwnersAccess() throws {
        let post = CustomClass(
            className: "Post", tableId: 1,
            fields: [
                CustomClass.Field(
                    name: "likes", type: CustomFieldType(.relation, targetClass: "Fan"), column: nil,
                    joinTable: "custom_1_r1"),
                CustomClass.Field(
                    name: "author", type: CustomFieldType(.pointer, targetClass: "_User"), column: "c2"),
            ], nextColumn: 3, permissions: .public, indexes: [])
        let fan = CustomClass(
            className: "Fan", tableId: 2, fields: [], nextColumn: 1, permissions: .public, indexes: [])
        let whereText =
            #"{"$relatedTo":{"object":{"__type":"Pointer","className":"Post","objectId":"p1"},"key":"likes"}}"#
        func sql(_ owner: ParseReadableClass) throws -> String {
            var query = try ParseQuery.find(
                fan.schema, items: [("where", whereText)], classes: { name, _ in name == "Post" ? owner : nil })
            query.access = ParseAccess(caller: .user(objectId: "u1"))
            return try #require(ParseSQLCompiler.compile(query).select).sql
        }
        let readable = try sql(ParseReadableClass(schema: post.schema))
        #expect(
            readable.contains(
                "t.object_id in (select r.related_id from custom_1_r1 r where r.owning_id = $1::text and $1::text in"
                    + " (select s1.object_id from custom_1 s1 where s1.object_id = $2::text and s1.readers && $3::text[]))"
            ), "\(readable)")
        let pointed = try sql(
            ParseReadableClass(
                schema: post.schema,
                rows: .or([.compare(field: "author", op: .equal, value: .text("u1"))])))
        #expect(pointed.contains("where (s1.object_id = $2::text and (s1.c2 = $3::text)) and s1.readers"), "\(pointed)")
        #expect(try sql(ParseReadableClass(schema: post.schema, refused: true)).contains("where false and"))
        #expect(throws: ParseError.self) { try sql(ParseReadableClass(schema: post.schema, hidden: ["likes"])) }
    }

    @Test func fetchedObjects_CarryTheirRelationFields_AsParseServer() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        try classes(server)
        let fanIds = try fans(server, ["f1"])
        let id = try post(server, likedBy: fanIds)
        func likes(_ items: [String: String]) throws -> Any? {
            let found = try F.find(server, items, className: "Post")
            #expect(found.status == 200, "\(found.text)")
            return F.results(found).first?["likes"]
        }
        #expect(try likes([:]) as? [String: String] == Self.relation)
        let got = try server.request("GET", "/parse/classes/Post/\(id)")
        #expect(got.json["likes"] as? [String: String] == Self.relation, "\(got.text)")
        // With keys, as Parse Server's storage adapters write every Relation field (and excludeKeys).
        #expect(try likes(["keys": "title"]) as? [String: String] == Self.relation)
        let onlyLikes = try F.find(server, ["keys": "likes"], className: "Post")
        #expect(F.results(onlyLikes).first?["likes"] as? [String: String] == Self.relation, "\(onlyLikes.text)")
        #expect(F.results(onlyLikes).first?["title"] == nil)
        #expect(try likes(["excludeKeys": "likes"]) as? [String: String] == Self.relation)
        let keyed = try server.request("GET", "/parse/classes/Post/\(id)?keys=title")
        #expect(keyed.json["likes"] as? [String: String] == Self.relation, "\(keyed.text)")
        #expect(F.code(try F.find(server, ["keys": "likes,nope"], className: "Post")) == 102)
        // A class without Relation fields gains none.
        let fan = F.results(try F.find(server, className: "Fan")).first ?? [:]
        #expect(Set(fan.keys) == ["objectId", "createdAt", "updatedAt", "name"], "\(fan)")

        // An included object carries its own.
        let comment = try created(
            try server.json("POST", "/parse/classes/Comment", ["post": TestServer.pointer("Post", id)]))
        let included = try server.request("GET", "/parse/classes/Comment/\(comment)?include=post")
        let inner = included.json["post"] as? [String: Any]
        #expect(inner?["likes"] as? [String: String] == Self.relation, "\(included.text)")

        // protectedFields hide it as any field: from the caller's find, get and include.
        let hidden = try server.json(
            "PUT", "/parse/schemas/Post",
            ["classLevelPermissions": ["find": ["*": true], "get": ["*": true], "protectedFields": ["*": ["likes"]]]])
        #expect(hidden.status == 200, "\(hidden.text)")
        _ = try server.json(
            "PUT", "/parse/schemas/Comment", ["classLevelPermissions": ["find": ["*": true], "get": ["*": true]]])
        let anonymousFind = try F.find(server, className: "Post", anonymous: true)
        #expect(F.results(anonymousFind).count == 1 && F.results(anonymousFind).first?["likes"] == nil)
        let anonymousGet = try server.request("GET", "/parse/classes/Post/\(id)", anonymous: true)
        #expect(anonymousGet.status == 200 && anonymousGet.json["likes"] == nil, "\(anonymousGet.text)")
        let anonymousInclude = try server.request(
            "GET", "/parse/classes/Comment/\(comment)?include=post", anonymous: true)
        let anonymousInner = anonymousInclude.json["post"] as? [String: Any]
        #expect(
            anonymousInner?["title"] as? String == "t" && anonymousInner?["likes"] == nil, "\(anonymousInclude.text)")
        #expect(try likes([:]) as? [String: String] == Self.relation)  // the master key
    }

    @Test func relatedTo_OfAnOwnerTheCallerMayNotRead_RelatesNothing() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let alice = try server.makeUser("alice")
        let bob = try server.makeUser("bob")
        try classes(server)
        let ids = try fans(server, ["f1", "f2", "f3"])
        let secret = try post(server, likedBy: [ids[0], ids[1]], ["ACL": [alice.objectId: ["read": true]]])
        let open = try post(server, likedBy: [ids[2]])
        let nobody = try post(server, likedBy: [ids[2]], ["ACL": [String: Any]()])

        #expect(names(try liked(server, secret)) == ["f1", "f2"])  // the master key
        #expect(names(try liked(server, secret, headers: alice.headers)) == ["f1", "f2"])
        // The attacker knows the private post's id: no member, no count, no membership oracle.
        let stolen = try liked(server, secret, headers: bob.headers)
        #expect(stolen.status == 200 && names(stolen).isEmpty && stolen.json["count"] as? Int == 0, "\(stolen.text)")
        #expect(names(try liked(server, secret, anonymous: true)).isEmpty)
        #expect(names(try liked(server, secret, headers: bob.headers, also: ["objectId": ids[0]])).isEmpty)
        #expect(names(try liked(server, open, headers: bob.headers)) == ["f3"])
        #expect(names(try liked(server, open, anonymous: true)) == ["f3"])
        #expect(names(try liked(server, nobody, headers: alice.headers)).isEmpty)  // ACL {}: the master key's
        #expect(names(try liked(server, nobody)) == ["f3"])
    }

    @Test func relatedTo_FollowsTheOwningClassPermissions() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let alice = try server.makeUser("alice")
        let bob = try server.makeUser("bob")
        // Posts are read through their `author` alone (pointer permission), as the owner's `get` needs.
        try classes(server, postCLP: ["find": [String: Any](), "get": [String: Any](), "readUserFields": ["author"]])
        let ids = try fans(server, ["f1", "f2"])
        let bobs = try post(server, likedBy: [ids[0]], ["author": TestServer.pointer("_User", bob.objectId)])
        let alices = try post(server, likedBy: [ids[1]], ["author": TestServer.pointer("_User", alice.objectId)])
        #expect(names(try liked(server, bobs, headers: bob.headers)) == ["f1"])
        #expect(names(try liked(server, alices, headers: bob.headers)).isEmpty)
        #expect(names(try liked(server, alices, headers: alice.headers)) == ["f2"])
        #expect(names(try liked(server, alices, anonymous: true)).isEmpty)

        // The class's `get` refused outright: no relation of it is readable (200, no rows).
        #expect(
            try server.json(
                "PUT", "/parse/schemas/Post",
                ["classLevelPermissions": ["find": ["*": true], "get": [String: Any](), "readUserFields": []]]
            ).status == 200)
        let refused = try liked(server, bobs, headers: bob.headers)
        #expect(refused.status == 200 && names(refused).isEmpty, "\(refused.text)")
        #expect(names(try liked(server, bobs)) == ["f1"])

        // A relation the owner's protectedFields hide: 119, as a query on a protected field.
        #expect(
            try server.json(
                "PUT", "/parse/schemas/Post",
                ["classLevelPermissions": ["get": ["*": true], "protectedFields": ["*": ["likes"]]]]
            ).status == 200)
        let protected = try liked(server, bobs, headers: bob.headers)
        #expect(F.code(protected) == 119 && !protected.text.contains("f1"), "\(protected.text)")
        #expect(F.code(try liked(server, bobs, anonymous: true)) == 119)
        #expect(names(try liked(server, bobs)) == ["f1"])
    }
}
