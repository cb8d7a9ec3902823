import Foundation
import Testing

@testable import GalleryApp

/// `/aggregate/<Class>` (issue #27, item 6): the master key's pipelines on the built-in classes,
/// and Parse errors (102) for what it does not support.
struct ParseAggregateTests {
    private typealias F = ManifestFixtures

    private func aggregate(_ server: TestServer, _ className: String, _ pipeline: Any, headers: [String: String] = [:])
        throws -> TestServer.Response
    {
        try server.request(
            "GET", "/parse/aggregate/\(className)?pipeline=" + TestServer.queryValue(F.json(pipeline)), headers: headers
        )
    }

    @Test func pipeline_MatchesGroupsSortsLimitsAndProjects() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let alice = try server.makeUser("alice")
        let bob = try server.makeUser("bob")
        _ = try server.insertPhotos(3, owner: alice.objectId)
        _ = try server.insertPhotos(2, owner: bob.objectId)
        let trashed = try server.insertPhotos(1, owner: bob.objectId)
        try server.application.pool.query("update photos set deleted_at = now() where object_id = $1", [trashed[0]])
        let grouped = try aggregate(
            server, "Photo",
            [
                ["$match": ["status": "ready"]],
                [
                    "$group": [
                        "_id": "$owner", "photos": ["$sum": 1], "bytes": ["$sum": "$byteSize"],
                        "widest": ["$max": "$width"],
                    ]
                ],
                ["$sort": ["photos": -1]],
                ["$limit": 1],
            ])
        #expect(grouped.status == 200, "\(grouped.text)")
        let rows = F.results(grouped)
        #expect(rows.count == 1 && rows.first?["objectId"] as? String == alice.objectId, "\(grouped.text)")
        #expect(
            rows.first?["photos"] as? Int == 3 && rows.first?["bytes"] as? Int == 3000
                && rows.first?["widest"] as? Int == 400)
        // All rows in one group; stage parameters instead of `pipeline`; $project keeps fields.
        let total = try aggregate(
            server, "Photo", [["$group": ["objectId": NSNull(), "n": ["$count": [:] as [String: Any]]]]])
        #expect(F.results(total).first?["n"] as? Int == 5, "trashed rows are left out: \(total.text)")
        let projected = try server.request(
            "GET", "/parse/aggregate/Photo?project=" + TestServer.queryValue(#"{"filename":1}"#) + "&limit=2")
        #expect(
            F.results(projected).count == 2
                && Set(F.results(projected).first?.keys ?? [:].keys) == ["objectId", "filename"], "\(projected.text)")
        #expect(
            F.results(try aggregate(server, "_User", [["$group": ["_id": NSNull(), "n": ["$sum": 1]]]])).first?["n"]
                as? Int == 2)
    }

    @Test func pipeline_IsTheMasterKeys_AndBadStagesAre102() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let alice = try server.makeUser("alice")
        #expect(
            try aggregate(server, "Photo", [["$match": [:] as [String: Any]]], headers: alice.headers).status == 403)
        #expect(F.code(try aggregate(server, "Nope", [["$match": [:] as [String: Any]]])) == 103)
        let bad: [Any] = [
            [["$lookup": [:] as [String: Any]]], [["$sort": ["title": 1]], ["$match": [:] as [String: Any]]],
            [["$group": ["_id": "$nosuch"]]], [["$group": ["_id": "$title", "x": ["$avg": "$title"]]]],
            [["$group": ["_id": NSNull(), "bad name": ["$sum": 1]]]], [["$match": ["width": ["$where": 1]]]],
            [["$sort": ["missing": 1]]], [["$limit": -1]],
        ]
        for pipeline in bad {
            let r = try aggregate(server, "Photo", pipeline)
            #expect(r.status == 400 && F.code(r) == 102, "\(pipeline): \(r.text)")
        }
        let notArray = try server.request("GET", "/parse/aggregate/Photo?pipeline=%22text%22")
        #expect(notArray.status == 400 && F.code(notArray) == 102, "\(notArray.text)")
    }
}
