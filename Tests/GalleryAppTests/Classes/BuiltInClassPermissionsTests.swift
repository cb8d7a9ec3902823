import Foundation
import Testing

@testable import GalleryApp

/// Built-in classes' class-level permissions through `/parse/schemas/<Class>` (issue 27 item 3):
/// shown, changed with PUT and applied before the access filter; their fixed fields cannot be
/// deleted (136); a refused change changes nothing.
@Suite struct BuiltInClassPermissionsTests {
    private typealias F = ManifestFixtures

    private func permissions(_ server: TestServer, _ className: String) throws -> [String: Any] {
        try server.request("GET", "/parse/schemas/\(className)").json["classLevelPermissions"] as? [String: Any] ?? [:]
    }

    @Test func permissions_AreShownChangedAndApplied() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let alice = try server.makeUser("alice")
        // Open by default: the access filter decides the rows.
        #expect(try permissions(server, "Photo")["find"] as? [String: Bool] == ["*": true])
        let all = try server.request("GET", "/parse/schemas").json["results"] as? [[String: Any]] ?? []
        #expect(all.first { $0["className"] as? String == "Gallery" }?["classLevelPermissions"] != nil)

        let first = try server.json("POST", "/parse/classes/Gallery", ["name": "mine"], headers: alice.headers)
        let gallery = try #require(first.json["objectId"] as? String, "\(first.text)")
        // A kept answer and its tag, made under the open permissions.
        let before = try F.find(server, className: "Gallery", headers: alice.headers)
        #expect(F.results(before).first?["name"] as? String == "mine" && before.header("ETag") != nil)
        _ = try F.find(server, className: "Gallery", headers: alice.headers)

        let put = try server.json(
            "PUT", "/parse/schemas/Gallery",
            ["classLevelPermissions": ["create": ["role:Curators": true], "protectedFields": ["*": ["name"]]]])
        #expect(put.status == 200, "\(put.text)")
        let shown = try permissions(server, "Gallery")
        #expect(shown["create"] as? [String: Bool] == ["role:Curators": true])
        #expect(shown["find"] as? [String: Bool] == ["*": true])  // not named: stays open

        // Applied at once, kept answers included: the name is hidden, creation needs the role.
        let after = try F.find(server, className: "Gallery", headers: alice.headers)
        #expect(F.ids(after) == [gallery] && F.results(after).first?["name"] == nil, "\(after.text)")
        let got = try server.request("GET", "/parse/classes/Gallery/\(gallery)", headers: alice.headers)
        #expect(got.status == 200 && got.json["name"] == nil, "\(got.text)")
        #expect(
            F.code(
                try F.find(server, ["where": F.json(["name": "mine"])], className: "Gallery", headers: alice.headers))
                == 119)
        let refused = try server.json("POST", "/parse/classes/Gallery", ["name": "two"], headers: alice.headers)
        #expect(F.code(refused) == 119, "\(refused.text)")
        #expect(try server.request("GET", "/parse/classes/Gallery/\(gallery)").json["name"] as? String == "mine")
        let curators = try server.json(
            "POST", "/parse/roles",
            [
                "name": "Curators", "ACL": ["*": ["read": true]],
                "users": ["__op": "AddRelation", "objects": [TestServer.pointer("_User", alice.objectId)]],
            ])
        #expect(curators.status == 201, "\(curators.text)")
        #expect(
            try server.json("POST", "/parse/classes/Gallery", ["name": "two"], headers: alice.headers).status == 201)
    }

    @Test func protectedFields_NeverReachALiveQuerySubscriber() throws {
        // Listening: a Python LiveQuery client connects over a WebSocket.
        let server = try TestServer(workers: 0, listening: true)
        defer { server.stop() }
        #expect(server.application.liveQuery.waitUntilListening(timeout: 10))
        let alice = try server.makeUser("alice")
        let made = try server.json("POST", "/parse/classes/Gallery", ["name": "secret"], headers: alice.headers)
        let gallery = try #require(made.json["objectId"] as? String, "\(made.text)")
        let put = try server.json(
            "PUT", "/parse/schemas/Gallery", ["classLevelPermissions": ["protectedFields": ["*": ["name"]]]])
        #expect(put.status == 200, "\(put.text)")
        let run = try runLiveQueryScript(
            "live_query_protected_e2e.py",
            [server.baseURL, TestServer.appID, TestServer.masterKey, alice.token, gallery])
        #expect(run.status == 0 && run.output.contains("\"ok\": true"), "\(run.output)")
    }

    @Test func fixedFields_CannotBeDeleted_AndARefusedChangeChangesNothing() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let bodies: [([String: Any], Int)] = [
            (["fields": ["title": ["__op": "Delete"]]], 136),
            (["fields": ["title": ["type": "String"]]], 255),
            (["fields": ["nothing": ["__op": "Delete"]]], 255),
            // A good new field in a refused body is not added (BuiltInAppFieldTests adds them).
            (["fields": ["rating": ["type": "Number"]], "indexes": ["byTitle": ["title": 1]]], 119),
            (["fields": ["rating": ["type": "Number"]], "classLevelPermissions": ["find": ["*": "yes"]]], 107),
            (["fields": ["rating": ["type": "Number"], "title": ["__op": "Delete"]]], 136),
            (["indexes": ["byTitle": ["title": 1]]], 119),
            (["classLevelPermissions": ["find": ["*": "yes"]]], 107),
            (["classLevelPermissions": ["readUserFields": ["owner"]]], 107),
            (["classLevelPermissions": ["fly": ["*": true]]], 107),
            (["shape": 1], 107),
        ]
        for (body, code) in bodies {
            let response = try server.json("PUT", "/parse/schemas/Photo", body)
            #expect(response.status == 400 && F.code(response) == code, "\(body): \(response.text)")
        }
        #expect(try permissions(server, "Photo")["find"] as? [String: Bool] == ["*": true])
        #expect(F.code(try server.request("DELETE", "/parse/schemas/Photo")) == 119)
        let fields = try server.request("GET", "/parse/schemas/Photo").json["fields"] as? [String: Any]
        #expect(fields?["title"] != nil && fields?["rating"] == nil)
    }
}
