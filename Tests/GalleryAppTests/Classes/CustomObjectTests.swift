import Foundation
import Testing

@testable import GalleryApp

/// Objects of custom classes (issue 27 item 1): create, get, update with operations, delete,
/// find, count, batch, `_method`, `X-Parse-Request-Id`; fields added by saving; wrong types 111;
/// class-level permissions applied to every operation.
@Suite struct CustomObjectTests {
    @Test func objects_ThroughEveryRoute() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        // The master key creates the class by saving to it; the fields come with the values.
        let first = try server.json(
            "POST", "/parse/classes/Note",
            [
                "title": "one", "score": 1, "tags": ["a"], "meta": ["k": "v"], "done": false,
                "due": ["__type": "Date", "iso": "2026-01-02T03:04:05.006Z"],
                "spot": ["__type": "GeoPoint", "latitude": 1.5, "longitude": -2],
            ])
        #expect(first.status == 201, "\(first.text)")
        let id = try #require(first.json["objectId"] as? String)
        #expect(first.header("Location")?.hasSuffix("/parse/classes/Note/\(id)") == true)
        let fields =
            try server.request("GET", "/parse/schemas/Note").json["fields"] as? [String: [String: String]] ?? [:]
        #expect(
            fields["score"] == ["type": "Number"] && fields["due"] == ["type": "Date"]
                && fields["spot"] == ["type": "GeoPoint"])

        let got = try server.request("GET", "/parse/classes/Note/\(id)")
        #expect(got.json["title"] as? String == "one" && got.json["score"] as? Double == 1, "\(got.text)")
        #expect((got.json["meta"] as? [String: String]) == ["k": "v"])
        #expect((got.json["due"] as? [String: String])?["iso"] == "2026-01-02T03:04:05.006Z")
        #expect(got.json["createdAt"] as? String != nil && got.json["updatedAt"] as? String != nil)

        // Update with operations.
        let update = try server.json(
            "PUT", "/parse/classes/Note/\(id)",
            [
                "score": ["__op": "Increment", "amount": 2],
                "tags": ["__op": "AddUnique", "objects": ["a", "b", "b"]],
                "meta": ["__op": "Delete"], "title": "two",
            ])
        #expect(update.status == 200 && update.json["updatedAt"] != nil, "\(update.text)")
        var note = try server.request("GET", "/parse/classes/Note/\(id)").json
        #expect(
            note["score"] as? Double == 3 && (note["tags"] as? [String]) == ["a", "b"] && note["meta"] == nil, "\(note)"
        )
        _ = try server.json("PUT", "/parse/classes/Note/\(id)", ["tags": ["__op": "Remove", "objects": ["a"]]])
        _ = try server.json("PUT", "/parse/classes/Note/\(id)", ["tags": ["__op": "Add", "objects": ["c", "c"]]])
        note = try server.request("GET", "/parse/classes/Note/\(id)").json
        #expect((note["tags"] as? [String]) == ["b", "c", "c"], "\(note)")

        // Wrong types: 111, nothing written; bad names 105.
        #expect(try server.json("PUT", "/parse/classes/Note/\(id)", ["score": "many"]).json["code"] as? Int == 111)
        #expect(try server.json("POST", "/parse/classes/Note", ["title": 5]).json["code"] as? Int == 111)
        #expect(
            try server.json("PUT", "/parse/classes/Note/\(id)", ["title": ["__op": "Increment", "amount": 1]]).json[
                "code"] as? Int == 111)
        #expect(try server.json("POST", "/parse/classes/Note", ["bad-name": 1]).json["code"] as? Int == 105)
        #expect(try server.json("POST", "/parse/classes/Note", ["objectId": "x"]).json["code"] as? Int == 105)
        #expect(
            try server.json(
                "POST", "/parse/classes/Note", ["spot": ["__type": "GeoPoint", "latitude": 100, "longitude": 0]]
            ).status == 400)

        // Find: where, order, keys, count; _method GET; batch; idempotent create.
        for n in 0..<5 { _ = try server.json("POST", "/parse/classes/Note", ["title": "n\(n)", "score": n]) }
        let page = try server.request(
            "GET",
            "/parse/classes/Note?where=%7B%22score%22%3A%7B%22%24gte%22%3A2%7D%7D&order=-score,-title&keys=title&count=1"
        )
        let results = page.json["results"] as? [[String: Any]] ?? []
        #expect(results.map { $0["title"] as? String } == ["n4", "two", "n3", "n2"], "\(page.text)")
        #expect(results.first?["score"] == nil && page.json["count"] as? Int == 4)
        let override = try server.json("POST", "/parse/classes/Note", ["_method": "GET", "limit": 0, "count": 1])
        #expect(override.json["count"] as? Int == 6, "\(override.text)")
        let batch = try server.json(
            "POST", "/parse/batch",
            [
                "requests": [
                    ["method": "POST", "path": "/parse/classes/Note", "body": ["title": "b1"]],
                    ["method": "PUT", "path": "/parse/classes/Note/\(id)", "body": ["title": "b2"]],
                ]
            ])
        #expect(batch.jsonArray.count == 2 && batch.text.contains("\"success\""), "\(batch.text)")
        let retry = ["X-Parse-Request-Id": "note-create-1"]
        let once = try server.json(
            "POST", "/parse/classes/Note", ["title": "once"],
            headers: retry.merging(SchemaRoutesTests.master) { a, _ in a })
        let twice = try server.json(
            "POST", "/parse/classes/Note", ["title": "once"],
            headers: retry.merging(SchemaRoutesTests.master) { a, _ in a })
        #expect(once.json["objectId"] as? String == twice.json["objectId"] as? String)
        #expect(try server.request("GET", "/parse/classes/Note?count=1&limit=0").json["count"] as? Int == 8)

        // Delete: gone, and 101 again.
        #expect(try server.request("DELETE", "/parse/classes/Note/\(id)").status == 200)
        #expect(try server.request("GET", "/parse/classes/Note/\(id)").json["code"] as? Int == 101)
        #expect(try server.request("DELETE", "/parse/classes/Note/\(id)").json["code"] as? Int == 101)
    }

    @Test func classLevelPermissions_DecideEveryOperation() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let alice = try server.makeUser("alice")
        let bob = try server.makeUser("bob")
        #expect(
            try server.json(
                "POST", "/parse/schemas/Post",
                [
                    "fields": ["text": ["type": "String"]],
                    "classLevelPermissions": [
                        "find": ["*": true], "get": ["*": true], "count": ["requiresAuthentication": true],
                        "create": [alice.objectId: true], "update": [alice.objectId: true],
                        "delete": ["role:Administrator": true],
                    ],
                ]
            ).status == 200)
        // Client class creation is off: 119 without the master key, and nothing made.
        let made = try server.json("POST", "/parse/classes/Other", ["x": 1], headers: alice.headers)
        #expect(made.json["code"] as? Int == 119, "\(made.text)")
        #expect(try server.request("GET", "/parse/schemas/Other").json["code"] as? Int == 103)

        let created = try server.json("POST", "/parse/classes/Post", ["text": "hello"], headers: alice.headers)
        #expect(created.status == 201, "\(created.text)")
        let id = try #require(created.json["objectId"] as? String)
        #expect(
            try server.json("POST", "/parse/classes/Post", ["text": "no"], headers: bob.headers).json["code"] as? Int
                == 119)
        #expect(
            try server.json("POST", "/parse/classes/Post", ["text": "no"], anonymous: true).json["code"] as? Int == 119)
        // addField is not granted: a new field from alice is 119, and the class keeps its fields.
        #expect(
            try server.json("POST", "/parse/classes/Post", ["extra": 1], headers: alice.headers).json["code"] as? Int
                == 119)
        #expect((try server.request("GET", "/parse/schemas/Post").json["fields"] as? [String: Any])?["extra"] == nil)

        // Public find and get; count needs a session.
        #expect(
            (try server.request("GET", "/parse/classes/Post", anonymous: true).json["results"] as? [Any])?.count == 1)
        #expect(
            try server.request("GET", "/parse/classes/Post/\(id)", anonymous: true).json["text"] as? String == "hello")
        #expect(
            try server.request("GET", "/parse/classes/Post?count=1&limit=0", anonymous: true).json["code"] as? Int
                == 101)
        #expect(
            try server.request("GET", "/parse/classes/Post?count=1&limit=0", headers: bob.headers).json["count"] as? Int
                == 1)
        // Update: alice only. Delete: the Administrator role (no one holds it yet), the master key.
        #expect(
            try server.json("PUT", "/parse/classes/Post/\(id)", ["text": "x"], headers: bob.headers).json["code"]
                as? Int == 119)
        #expect(
            try server.json("PUT", "/parse/classes/Post/\(id)", ["text": "edited"], headers: alice.headers).status
                == 200)
        #expect(
            try server.request("DELETE", "/parse/classes/Post/\(id)", headers: alice.headers).json["code"] as? Int
                == 119)
        // Changing the CLP takes effect at once.
        #expect(
            try server.json("PUT", "/parse/schemas/Post", ["classLevelPermissions": ["find": [:], "get": [:]]]).status
                == 200)
        #expect(try server.request("GET", "/parse/classes/Post", anonymous: true).json["code"] as? Int == 119)
        #expect(try server.request("DELETE", "/parse/classes/Post/\(id)").status == 200)
    }

    @Test func saves_AddingOneFieldWithTwoTypesAtOnce_OneWins_TheOther111() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        #expect(try server.json("POST", "/parse/schemas/Mixed", [:]).status == 200)
        for round in 0..<4 {
            let statuses = Locked<[Int]>([])
            DispatchQueue.concurrentPerform(iterations: 4) { i in
                let value: Any = i % 2 == 0 ? "text" : 42
                let response = try? server.json("POST", "/parse/classes/Mixed", ["f\(round)": value])
                statuses.withValue {
                    $0.append(response.map { $0.status == 201 ? 201 : $0.json["code"] as? Int ?? $0.status } ?? 0)
                }
            }
            // Whichever type came first, the two saves of the other type are 111, never a 500.
            #expect(statuses.withValue { $0.sorted() } == [111, 111, 201, 201], "round \(round)")
        }
    }

    @Test func clientClassCreation_WhenAllowed_MakesAPublicClass() throws {
        let server = try TestServer(workers: 0) { $0.allowClientClassCreation = true }
        defer { server.stop() }
        let user = try server.makeUser("carol")
        let made = try server.json("POST", "/parse/classes/Diary", ["entry": "day one"], headers: user.headers)
        #expect(made.status == 201, "\(made.text)")
        let clp = try server.request("GET", "/parse/schemas/Diary").json["classLevelPermissions"] as? [String: Any]
        #expect((clp?["find"] as? [String: Bool]) == ["*": true])
        #expect(
            (try server.request("GET", "/parse/classes/Diary", headers: user.headers).json["results"] as? [Any])?.count
                == 1)
        // A name Parse refuses is still 103.
        #expect(
            try server.json("POST", "/parse/classes/_Diary", ["x": 1], headers: user.headers).json["code"] as? Int
                == 103)
    }

    @Test func classLevelPermissions_Evaluation() throws {
        let json = try ParseJSONParser.parse(
            Array(
                #"{"find":{"*":true},"get":{"requiresAuthentication":true},"update":{"u1":true,"role:Mods":true}}"#.utf8
            ), maxDepth: 8)
        let clp = try ClassLevelPermissions.parse(json)
        #expect(clp.allows(.find, userId: nil, roles: []))
        #expect(!clp.allows(.get, userId: nil, roles: []) && clp.allows(.get, userId: "u2", roles: []))
        #expect(clp.allows(.update, userId: "u1", roles: []) && !clp.allows(.update, userId: "u2", roles: []))
        #expect(
            clp.allows(.update, userId: "u2", roles: ["Mods"]) && !clp.allows(.update, userId: nil, roles: ["Mods"]))
        #expect(!clp.allows(.delete, userId: "u1", roles: ["Mods"]))
        #expect(throws: Never.self) { try clp.require(.delete, on: "X", caller: .master, roles: []) }
        #expect(try ClassLevelPermissions.parse(try ParseJSONParser.parse(Array(clp.json.utf8), maxDepth: 8)) == clp)
    }
}
