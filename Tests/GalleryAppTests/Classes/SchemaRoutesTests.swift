import Foundation
import Testing

@testable import GalleryApp

/// `/parse/schemas` (issue 27 item 1): custom classes made, changed and dropped with the master
/// key, names checked as Parse Server checks them, and every bad input a Parse error, not a 500
/// and not a half-made class.
@Suite struct SchemaRoutesTests {
    static let master = ["X-Parse-Master-Key": TestServer.masterKey]

    @Test func schema_CreateChangeDelete_AsParseServer() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let created = try server.json(
            "POST", "/parse/schemas/Comment",
            [
                "className": "Comment",
                "fields": [
                    "text": ["type": "String"], "likes": ["type": "Number"],
                    "photo": ["type": "Pointer", "targetClass": "Photo"],
                    "meta": ["type": "Object"], "tags": ["type": "Array"], "where": ["type": "GeoPoint"],
                    "at": ["type": "Date"],
                    "flag": ["type": "Boolean"], "file": ["type": "File"], "raw": ["type": "Bytes"],
                    "likers": ["type": "Relation", "targetClass": "_User"],
                ],
                "classLevelPermissions": [
                    "find": ["*": true], "get": ["*": true], "count": ["requiresAuthentication": true],
                ],
                "indexes": ["byLikes": ["likes": -1]],
            ])
        #expect(created.status == 200, "\(created.text)")
        let fields = try #require(created.json["fields"] as? [String: Any])
        #expect((fields["photo"] as? [String: String]) == ["type": "Pointer", "targetClass": "Photo"])
        #expect((fields["objectId"] as? [String: String]) == ["type": "String"])
        #expect(fields.count == 15)
        let clp = try #require(created.json["classLevelPermissions"] as? [String: Any])
        #expect((clp["find"] as? [String: Bool]) == ["*": true])
        #expect((clp["create"] as? [String: Bool]) == [:])
        #expect(((created.json["indexes"] as? [String: Any])?["byLikes"] as? [String: Int]) == ["likes": -1])

        // GET one and all; built-in classes are listed too.
        #expect(try server.request("GET", "/parse/schemas/Comment").json["className"] as? String == "Comment")
        let all = try server.request("GET", "/parse/schemas").json["results"] as? [[String: Any]] ?? []
        #expect(Set(all.compactMap { $0["className"] as? String }).isSuperset(of: ["Photo", "Gallery", "Comment"]))

        // PUT: add and delete fields and indexes.
        let changed = try server.json(
            "PUT", "/parse/schemas/Comment",
            [
                "fields": ["mood": ["type": "String"], "raw": ["__op": "Delete"]],
                "indexes": ["byLikes": ["__op": "Delete"], "byMood": ["mood": 1]],
            ])
        #expect(changed.status == 200, "\(changed.text)")
        let after = try #require(changed.json["fields"] as? [String: Any])
        #expect(after["mood"] != nil && after["raw"] == nil)
        #expect(((changed.json["indexes"] as? [String: Any])?.keys).map(Set.init) == ["_id_", "byMood"])

        // Not empty: 255; emptied: dropped, and gone.
        #expect(try server.json("POST", "/parse/classes/Comment", ["text": "hi"]).status == 201)
        let refused = try server.request("DELETE", "/parse/schemas/Comment")
        #expect(refused.json["code"] as? Int == 255, "\(refused.text)")
        let id =
            try #require(try server.request("GET", "/parse/classes/Comment").json["results"] as? [[String: Any]])
            .first?["objectId"] as? String
        #expect(try server.request("DELETE", "/parse/classes/Comment/\(id ?? "")").status == 200)
        #expect(try server.request("DELETE", "/parse/schemas/Comment").status == 200)
        #expect(try server.request("GET", "/parse/schemas/Comment").json["code"] as? Int == 103)
        #expect(try server.request("GET", "/parse/classes/Comment").json["code"] as? Int == 103)
        // The table went with it.
        #expect(try server.application.pool.query("select count(*) from custom_classes")[0].decode(Int64.self, 0) == 0)
    }

    @Test func schema_BadInput_IsAParseError_AndLeavesNothingHalfMade() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        func code(_ method: String, _ path: String, _ body: Any) throws -> Int? {
            let response = try server.json(method, path, body)
            #expect(response.status < 500, "\(response.text)")
            return response.json["code"] as? Int
        }
        #expect(try code("POST", "/parse/schemas/_Secret", [:]) == 103)
        #expect(try code("POST", "/parse/schemas/9lives", [:]) == 103)
        #expect(try code("POST", "/parse/schemas/Robert%27%3Bdrop", [:]) == 103)
        #expect(try code("POST", "/parse/schemas/Photo", [:]) == 103)
        #expect(try code("POST", "/parse/schemas/A", ["className": "B"]) == 103)
        #expect(try code("POST", "/parse/schemas/A", ["fields": ["bad-name": ["type": "String"]]]) == 105)
        #expect(try code("POST", "/parse/schemas/A", ["fields": ["className": ["type": "String"]]]) == 105)
        #expect(try code("POST", "/parse/schemas/A", ["fields": ["x": ["type": "Integer"]]]) == 111)
        #expect(try code("POST", "/parse/schemas/A", ["fields": ["x": ["type": "Pointer"]]]) == 135)
        #expect(
            try code("POST", "/parse/schemas/A", ["fields": ["x": ["type": "Pointer", "targetClass": "no good"]]])
                == 103)
        #expect(try code("POST", "/parse/schemas/A", ["fields": ["x": "String"]]) == 107)
        #expect(
            try code(
                "POST", "/parse/schemas/A",
                ["fields": ["ok": ["type": "String"]], "classLevelPermissions": ["find": ["*": false]]]) == 107)
        #expect(try code("POST", "/parse/schemas/A", ["classLevelPermissions": ["steal": ["*": true]]]) == 107)
        #expect(try code("POST", "/parse/schemas/A", ["classLevelPermissions": ["find": true]]) == 107)
        #expect(try code("POST", "/parse/schemas/A", ["classLevelPermissions": ["find": ["not a user": true]]]) == 107)
        #expect(try code("POST", "/parse/schemas/A", ["indexes": ["i": ["missing": 1]]]) == 102)
        // None of those left a class (or a table) behind.
        #expect(try server.application.pool.query("select count(*) from custom_classes")[0].decode(Int64.self, 0) == 0)
        #expect(
            try server.application.pool.query("select count(*) from pg_tables where tablename ~ '^custom_[0-9]+$'")[0]
                .decode(Int64.self, 0) == 0)

        #expect(try server.json("POST", "/parse/schemas/A", ["fields": ["n": ["type": "Number"]]]).status == 200)
        #expect(try code("POST", "/parse/schemas/A", [:]) == 103)  // exists
        #expect(try code("PUT", "/parse/schemas/A", ["fields": ["n": ["type": "String"]]]) == 255)  // type change
        #expect(try code("PUT", "/parse/schemas/A", ["fields": ["gone": ["__op": "Delete"]]]) == 255)
        #expect(try code("PUT", "/parse/schemas/A", ["fields": ["objectId": ["__op": "Delete"]]]) == 136)
        #expect(try code("PUT", "/parse/schemas/A", ["fields": ["ACL": ["type": "String"]]]) == 136)
        #expect(try code("PUT", "/parse/schemas/Nope", ["fields": [:]]) == 103)
        // A PUT failing half-way (second field bad) keeps the first field out too.
        #expect(
            try code("PUT", "/parse/schemas/A", ["fields": ["fine": ["type": "String"], "n": ["type": "Boolean"]]])
                == 255)
        let fields = try server.request("GET", "/parse/schemas/A").json["fields"] as? [String: Any] ?? [:]
        #expect(fields["fine"] == nil && (fields["n"] as? [String: String]) == ["type": "Number"])
        // Without the master key: 403, as Parse Server.
        #expect(try server.request("GET", "/parse/schemas", anonymous: true).status == 403)
        #expect(try server.json("POST", "/parse/schemas/B", [:], anonymous: true).status == 403)
    }

    @Test func schema_TwoCreatorsAtOnce_OneWins_TheOther103() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        for round in 0..<4 {
            let statuses = Locked<[Int]>([])
            DispatchQueue.concurrentPerform(iterations: 4) { _ in
                let response = try? server.json(
                    "POST", "/parse/schemas/Race\(round)", ["fields": ["x": ["type": "String"]]])
                statuses.withValue { $0.append(response?.status ?? 0) }
            }
            #expect(statuses.withValue { $0.sorted() } == [200, 400, 400, 400])
            // Two first saves at once both land in the one class the first made.
            DispatchQueue.concurrentPerform(iterations: 4) { i in
                _ = try? server.json("POST", "/parse/classes/Saved\(round)", ["n\(i % 2)": i])
            }
            let count = try server.request("GET", "/parse/classes/Saved\(round)?count=1&limit=0")
            #expect(count.json["count"] as? Int == 4, "\(count.text)")
        }
    }
}
