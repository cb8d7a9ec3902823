import Foundation
import Testing

@testable import GalleryApp

/// `/aggregate/<Class>` on an app's own classes (issue #27, item 6): the same stages as on Photo,
/// over the class's own fields, the master key's only; names and shapes it cannot take are 102.
struct CustomClassAggregateTests {
    private typealias F = ManifestFixtures

    private func aggregate(_ server: TestServer, _ className: String, _ pipeline: Any, headers: [String: String] = [:])
        throws -> TestServer.Response
    {
        try server.request(
            "GET", "/parse/aggregate/\(className)?pipeline=" + TestServer.queryValue(F.json(pipeline)), headers: headers
        )
    }

    /// Score (`player`, `points`, `level`, `friends` → _User): five rows of two players.
    private func scores(_ server: TestServer) throws {
        let made = try server.json(
            "POST", "/parse/schemas/Score",
            [
                "fields": [
                    "player": ["type": "String"], "points": ["type": "Number"], "level": ["type": "Number"],
                    "friends": ["type": "Relation", "targetClass": "_User"],
                ]
            ])
        #expect(made.status == 200, "\(made.text)")
        for (player, points, level) in [("ann", 10, 1), ("ann", 30, 2), ("ann", 20, 2), ("ben", 5, 1), ("ben", 7, 3)] {
            let row = try server.json(
                "POST", "/parse/classes/Score", ["player": player, "points": points, "level": level])
            #expect(row.status == 201, "\(row.text)")
        }
    }

    @Test func pipeline_OnACustomClass_MatchesGroupsSortsSkipsLimitsAndProjects() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        try scores(server)
        let grouped = try aggregate(
            server, "Score",
            [
                ["$match": ["level": ["$gte": 2]]],
                [
                    "$group": [
                        "_id": "$player", "total": ["$sum": "$points"], "games": ["$sum": 1],
                        "best": ["$max": "$points"], "n": ["$count": [String: Any]()],
                    ]
                ],
                ["$sort": ["total": -1]],
            ])
        #expect(grouped.status == 200, "\(grouped.text)")
        let rows = F.results(grouped)
        #expect(rows.map { $0["objectId"] as? String } == ["ann", "ben"], "\(grouped.text)")
        #expect(
            rows.first?["total"] as? Int == 50 && rows.first?["games"] as? Int == 2 && rows.first?["best"] as? Int == 30
                && rows.first?["n"] as? Int == 2, "\(grouped.text)")
        // Every row, sorted, a page of it, only the fields kept.
        let page = try aggregate(
            server, "Score",
            [["$sort": ["points": 1]], ["$skip": 1], ["$limit": 2], ["$project": ["points": 1]]])
        #expect(page.status == 200, "\(page.text)")
        #expect(F.results(page).map { $0["points"] as? Int } == [7, 10], "\(page.text)")
        #expect(Set(F.results(page).first?.keys ?? [:].keys) == ["objectId", "points"], "\(page.text)")
        // Stage parameters instead of `pipeline`, and a compound group key.
        let byParameters = try server.request(
            "GET",
            "/parse/aggregate/Score?group="
                + TestServer.queryValue(#"{"_id":{"who":"$player","level":"$level"},"n":{"$sum":1}}"#)
                + "&sort=" + TestServer.queryValue(#"{"n":-1}"#) + "&limit=1")
        let top = F.results(byParameters).first
        #expect(
            (top?["objectId"] as? [String: Any])?["who"] as? String == "ann" && top?["n"] as? Int == 2,
            "\(byParameters.text)")
    }

    @Test func pipeline_OnACustomClass_IsTheMasterKeys_AndValidatesNamesAndShapes() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let alice = try server.makeUser("alice")
        try scores(server)
        let open = try server.json(
            "PUT", "/parse/schemas/Score", ["classLevelPermissions": ["find": ["*": true], "get": ["*": true]]])
        #expect(open.status == 200, "\(open.text)")
        // The class is open to finds, but a pipeline is the master key's alone, as on Parse Server.
        let user = try aggregate(server, "Score", [["$match": [String: Any]()]], headers: alice.headers)
        #expect(user.status == 403, "\(user.text)")
        #expect(try server.request("GET", "/parse/aggregate/Score?limit=1", anonymous: true).status == 403)
        #expect(F.code(try aggregate(server, "Nope", [["$match": [String: Any]()]])) == 103)
        #expect(F.code(try aggregate(server, "bad-name", [["$match": [String: Any]()]])) == 103)

        let bad: [Any] = [
            [["$group": ["_id": "$nosuch"]]],
            [["$group": ["_id": "$friends"]]],  // a Relation is no column
            [["$group": ["_id": NSNull(), "x": ["$sum": "$player"]]]],  // a String has no sum
            [["$group": ["_id": NSNull(), "x\"); drop table users; --": ["$sum": 1]]]],
            [["$group": ["_id": ["a b": "$player"]]]],
            [["$match": ["nosuch": 1]]], [["$match": ["points": "ten"]]], [["$match": ["$where": "1"]]],
            [["$project": ["nosuch": 1]]], [["$project": ["points": 0]]], [["$project": [String: Any]()]],
            [["$sort": ["nosuch": 1]]], [["$sort": ["points": 2]]], [["$limit": "ten"]], [["$skip": -1]],
            [["$match": [String: Any]()], ["$match": [String: Any]()]],  // a stage twice
            [["$limit": 1], ["$match": [String: Any]()]],  // out of order
            [["$lookup": ["from": "users"]]], [["$match": [String: Any](), "$limit": 1]], [1], ["$match"],
        ]
        for pipeline in bad {
            let r = try aggregate(server, "Score", pipeline)
            #expect(r.status == 400 && F.code(r) == 102, "\(pipeline): \(r.text)")
        }
        let notArray = try server.request("GET", "/parse/aggregate/Score?pipeline=%22text%22")
        #expect(notArray.status == 400 && F.code(notArray) == 102, "\(notArray.text)")
        let unknownParameter = try server.request("GET", "/parse/aggregate/Score?lookup=%7B%7D")
        #expect(unknownParameter.status == 400 && F.code(unknownParameter) == 102, "\(unknownParameter.text)")
        // Nothing was dropped: the class still answers.
        let count = try aggregate(server, "Score", [["$group": ["_id": NSNull(), "n": ["$sum": 1]]]])
        #expect(F.results(count).first?["n"] as? Int == 5, "\(count.text)")
    }
}
