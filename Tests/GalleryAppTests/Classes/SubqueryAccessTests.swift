import Foundation
import Testing

@testable import GalleryApp

/// What a subquery may read (docs/decisions/043): `$inQuery`, `$notInQuery`, `$select` and
/// `$dontSelect` read their class as a find of it would, in class finds, in `/users` (and
/// `/classes/_User`) finds and in `/aggregate`'s `$match`: its `protectedFields` may be neither
/// queried nor selected (119), its pointer permissions narrow its rows, its ACLs hide private rows.
/// The attacker's requests are written out: none may tell a value or a row the caller cannot read.
@Suite struct SubqueryAccessTests {
    private typealias F = ManifestFixtures

    /// Secret (`name`, `pin` protected from everyone, `owner` → _User): "open" (public, pin 1234)
    /// and "hidden" (alice's alone, pin 9999), both alice's. Note (`title`, `code`, `secret` →
    /// Secret): n1 → open (code 1234), n2 → hidden (code 9999). Both classes readable by anyone.
    private func setUp(_ server: TestServer, alice: TestUser, secretCLP: [String: Any]? = nil) throws {
        let open: [String: Any] = ["find": ["*": true], "get": ["*": true], "count": ["*": true]]
        var secret = open
        secret["protectedFields"] = ["*": ["pin"]]
        let classes: [(String, [String: Any], [String: Any])] = [
            (
                "Secret",
                [
                    "name": ["type": "String"], "pin": ["type": "String"],
                    "owner": ["type": "Pointer", "targetClass": "_User"],
                ], secretCLP ?? secret
            ),
            (
                "Note",
                [
                    "title": ["type": "String"], "code": ["type": "String"],
                    "secret": ["type": "Pointer", "targetClass": "Secret"],
                ], open
            ),
        ]
        for (name, fields, clp) in classes {
            let made = try server.json(
                "POST", "/parse/schemas/\(name)", ["fields": fields, "classLevelPermissions": clp])
            #expect(made.status == 200, "\(made.text)")
        }
        let owner = TestServer.pointer("_User", alice.objectId)
        for (name, pin, acl, note) in [
            ("open", "1234", nil, "n1"), ("hidden", "9999", [alice.objectId: ["read": true]], "n2"),
        ] as [(String, String, [String: Any]?, String)] {
            var body: [String: Any] = ["name": name, "pin": pin, "owner": owner]
            if let acl { body["ACL"] = acl }
            let made = try server.json("POST", "/parse/classes/Secret", body)
            let id = try #require(made.json["objectId"] as? String, "\(made.text)")
            let noted = try server.json(
                "POST", "/parse/classes/Note", ["title": note, "code": pin, "secret": TestServer.pointer("Secret", id)])
            #expect(noted.status == 201, "\(noted.text)")
        }
    }

    private func notes(_ server: TestServer, _ condition: [String: Any], headers: [String: String] = [:])
        throws -> TestServer.Response
    {
        try F.find(server, ["where": F.json(condition)], className: "Note", headers: headers)
    }

    private func titles(_ response: TestServer.Response) -> [String] {
        F.results(response).compactMap { $0["title"] as? String }.sorted()
    }

    private func secrets(_ condition: [String: Any]) -> [String: Any] {
        ["className": "Secret", "where": condition]
    }

    @Test func subqueries_NeverTellProtectedValues_OrPrivateRows() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let alice = try server.makeUser("alice")
        let bob = try server.makeUser("bob")
        try setUp(server, alice: alice)

        // The attacker's requests: guess a pin through a subquery's where, or copy the pins out
        // with $select/$dontSelect into a field they can read. Each is 119 and names no note.
        let attacks: [[String: Any]] = [
            ["secret": ["$inQuery": secrets(["pin": "1234"])]],
            ["secret": ["$notInQuery": secrets(["pin": ["$gt": "5000"]])]],
            ["secret": ["$inQuery": secrets(["$or": [["name": "x"], ["pin": ["$regex": "^1"]]]])]],
            ["code": ["$select": ["query": secrets([:]), "key": "pin"]]],
            ["code": ["$dontSelect": ["query": secrets([:]), "key": "pin"]]],
            // Nested one level down.
            [
                "secret": [
                    "$inQuery": secrets(["name": ["$select": ["query": secrets(["pin": "1234"]), "key": "name"]]])
                ]
            ],
        ]
        for attack in attacks {
            for headers in [bob.headers, alice.headers] {
                let answer = try notes(server, attack, headers: headers)
                #expect(F.code(answer) == 119 && !answer.text.contains("n1"), "\(attack): \(answer.text)")
            }
            let anonymous = try F.find(server, ["where": F.json(attack)], className: "Note", anonymous: true)
            #expect(F.code(anonymous) == 119, "\(attack): \(anonymous.text)")
        }
        // The master key reads everything.
        #expect(titles(try notes(server, ["secret": ["$inQuery": secrets(["pin": "1234"])]])) == ["n1"])
        #expect(
            titles(try notes(server, ["code": ["$select": ["query": secrets([:]), "key": "pin"]]])) == ["n1", "n2"])

        // A private row is no subquery's row but its reader's.
        let hidden: [String: Any] = ["secret": ["$inQuery": secrets(["name": "hidden"])]]
        #expect(titles(try notes(server, hidden, headers: bob.headers)).isEmpty)
        #expect(titles(try notes(server, hidden, headers: alice.headers)) == ["n2"])
        let notOpen: [String: Any] = ["secret": ["$notInQuery": secrets(["name": "open"])]]
        #expect(titles(try notes(server, notOpen, headers: bob.headers)) == ["n2"])  // n2's secret is not bob's to read
    }

    @Test func subqueries_ReadThroughPointerPermissions() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let alice = try server.makeUser("alice")
        let bob = try server.makeUser("bob")
        // Secrets are read by their owner alone (`readUserFields`), not by `find`.
        try setUp(
            server, alice: alice,
            secretCLP: ["find": [String: Any](), "get": [String: Any](), "readUserFields": ["owner"]])
        let any: [String: Any] = ["secret": ["$inQuery": secrets([:])]]
        #expect(titles(try notes(server, any, headers: alice.headers)) == ["n1", "n2"])
        #expect(titles(try notes(server, any, headers: bob.headers)).isEmpty)
        let anonymous = try F.find(server, ["where": F.json(any)], className: "Note", anonymous: true)
        #expect(anonymous.status == 200 && titles(anonymous).isEmpty, "\(anonymous.text)")
        #expect(
            titles(try notes(server, ["secret": ["$notInQuery": secrets([:])]], headers: bob.headers)) == ["n1", "n2"])
        #expect(titles(try notes(server, any)) == ["n1", "n2"])
    }

    /// `GET /users?where=…` (and `/classes/_User`) with a subquery.
    private func users(
        _ server: TestServer, _ condition: [String: Any], headers: [String: String], path: String = "/parse/users"
    ) throws -> TestServer.Response {
        try server.request("GET", path + "?where=" + TestServer.queryValue(F.json(condition)), headers: headers)
    }

    private func usernames(_ response: TestServer.Response) -> [String] {
        F.results(response).compactMap { $0["username"] as? String }.sorted()
    }

    @Test func userFinds_TakeSubqueries_WithTheSameAccess() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let alice = try server.makeUser("alice")
        let bob = try server.makeUser("bob")
        let master = ["X-Parse-Master-Key": TestServer.masterKey]
        try setUp(server, alice: alice)
        func owners(_ condition: [String: Any]) -> [String: Any] {
            ["objectId": ["$select": ["query": secrets(condition), "key": "owner"]]]
        }
        for path in ["/parse/users", "/parse/classes/_User"] {
            let found = try users(server, owners(["name": "open"]), headers: bob.headers, path: path)
            #expect(usernames(found) == ["alice"], "\(path): \(found.text)")
            #expect(usernames(try users(server, owners(["name": "hidden"]), headers: bob.headers, path: path)).isEmpty)
            #expect(
                usernames(try users(server, owners(["name": "hidden"]), headers: alice.headers, path: path)) == [
                    "alice"
                ])
            // The attacker's probe of a protected pin: 119.
            let probe = try users(server, owners(["pin": "1234"]), headers: bob.headers, path: path)
            #expect(F.code(probe) == 119 && !probe.text.contains("alice"), "\(path): \(probe.text)")
            #expect(usernames(try users(server, owners(["pin": "1234"]), headers: master, path: path)) == ["alice"])
            // Parse Server's errors for a malformed subquery or class.
            let malformed: [String: Any] = ["objectId": ["$select": ["query": secrets([:])]]]
            #expect(F.code(try users(server, malformed, headers: bob.headers, path: path)) == 102)
            let badClass: [String: Any] = [
                "objectId": ["$select": ["query": ["className": "9bad", "where": [:] as [String: Any]], "key": "x"]]
            ]
            #expect(F.code(try users(server, badClass, headers: bob.headers, path: path)) == 103)
        }
        // `$relatedTo` of a custom class's Relation to users, read with its owner's access.
        _ = try server.json(
            "POST", "/parse/schemas/Club",
            [
                "fields": ["members": ["type": "Relation", "targetClass": "_User"]],
                "classLevelPermissions": ["find": ["*": true], "get": ["*": true]],
            ])
        let club = try server.json(
            "POST", "/parse/classes/Club",
            [
                "members": ["__op": "AddRelation", "objects": [TestServer.pointer("_User", bob.objectId)]],
                "ACL": [bob.objectId: ["read": true]],
            ])
        let clubId = try #require(club.json["objectId"] as? String, "\(club.text)")
        let members: [String: Any] = ["$relatedTo": ["object": TestServer.pointer("Club", clubId), "key": "members"]]
        #expect(usernames(try users(server, members, headers: bob.headers)) == ["bob"])
        #expect(usernames(try users(server, members, headers: alice.headers)).isEmpty)
    }

    @Test func aggregateMatch_TakesSubqueries() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let alice = try server.makeUser("alice")
        let bob = try server.makeUser("bob")
        _ = try server.insertPhotos(3, owner: alice.objectId)
        _ = try server.insertPhotos(2, owner: bob.objectId)
        try setUp(server, alice: alice)
        func photos(_ match: [String: Any], headers: [String: String] = [:]) throws -> TestServer.Response {
            let pipeline: [[String: Any]] = [["$match": match], ["$group": ["_id": NSNull(), "n": ["$sum": 1]]]]
            return try server.request(
                "GET", "/parse/aggregate/Photo?pipeline=" + TestServer.queryValue(F.json(pipeline)), headers: headers)
        }
        let byAlice = try photos(["owner": ["$inQuery": ["className": "_User", "where": ["username": "alice"]]]])
        #expect(F.results(byAlice).first?["n"] as? Int == 3, "\(byAlice.text)")
        let notAlice = try photos(["owner": ["$notInQuery": ["className": "_User", "where": ["username": "alice"]]]])
        #expect(F.results(notAlice).first?["n"] as? Int == 2, "\(notAlice.text)")
        // The master key's pipeline reads a protected field and a private row of a custom class.
        let secretOwners = try photos(["owner": ["$select": ["query": secrets(["pin": "9999"]), "key": "owner"]]])
        #expect(F.results(secretOwners).first?["n"] as? Int == 3, "\(secretOwners.text)")
        #expect(
            F.code(try photos(["owner": ["$inQuery": ["className": "9bad", "where": [:] as [String: Any]]]])) == 103)
        #expect(F.code(try photos(["owner": ["$inQuery": ["className": "_User"]]])) == 102)
        #expect(
            F.code(try photos(["title": ["$inQuery": ["className": "_User", "where": [:] as [String: Any]]]])) == 102)
        // Still the master key's alone.
        let refused = try photos(
            ["owner": ["$inQuery": ["className": "_User", "where": ["username": "alice"]]]], headers: bob.headers)
        #expect(refused.status == 403 && F.results(refused).isEmpty, "\(refused.text)")
    }
}
