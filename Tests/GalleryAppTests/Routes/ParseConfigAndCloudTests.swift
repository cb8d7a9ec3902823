import Foundation
import Testing

@testable import GalleryApp

/// Parse Config (`GET/PUT /config`) and Cloud Code's routes without Cloud Code (`/functions`,
/// `/jobs`): Parse Server's answers, as JSON (issue #27, item 6).
struct ParseConfigAndCloudTests {
    private typealias F = ManifestFixtures

    @Test func config_IsKeptByTheMasterKey_AndReadByTheApp() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let empty = try server.request("GET", "/parse/config", anonymous: true)
        #expect(empty.status == 200 && empty.text == #"{"params":{}}"#, "\(empty.text)")
        let put = try server.json(
            "PUT", "/parse/config",
            [
                "params": ["welcome": "hi", "maxPhotos": 12, "colors": ["red", 1.5], "secret": ["k": true]],
                "masterKeyOnly": ["secret": true],
            ])
        #expect(put.status == 200 && put.text == #"{"result":true}"#, "\(put.text)")
        let app = try server.request("GET", "/parse/config", anonymous: true)
        let params = try #require(app.json["params"] as? [String: Any], "\(app.text)")
        #expect(
            Set(params.keys) == ["colors", "maxPhotos", "welcome"] && app.json["masterKeyOnly"] == nil, "\(app.text)")
        #expect(params["welcome"] as? String == "hi" && params["maxPhotos"] as? Int == 12)
        #expect((params["colors"] as? [Any])?.count == 2)
        let master = try server.request("GET", "/parse/config")
        #expect((master.json["params"] as? [String: Any])?["secret"] != nil)
        #expect((master.json["masterKeyOnly"] as? [String: Any])?["secret"] as? Bool == true)
        // Delete one, change another; the rest stay (kept in PostgreSQL: another server sees them).
        #expect(
            try server.json("PUT", "/parse/config", ["params": ["welcome": ["__op": "Delete"], "maxPhotos": 20]]).status
                == 200)
        let after = try server.request("GET", "/parse/config", anonymous: true).json["params"] as? [String: Any]
        #expect(after?["welcome"] == nil && after?["maxPhotos"] as? Int == 20 && after?["colors"] != nil)
    }

    @Test func config_Refuses_WithoutTheMasterKey_OrWithABadBody() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let user = try server.makeUser("alice")
        #expect(try server.json("PUT", "/parse/config", ["params": ["a": 1]], headers: user.headers).status == 403)
        #expect(try server.json("PUT", "/parse/config", ["params": ["a": 1]], anonymous: true).status == 403)
        for body: Any in [
            ["params": 1], ["nope": [:] as [String: Any]], ["params": ["": 1]],
            ["params": ["a": ["__op": "Increment"]]],
            ["params": ["a": 1], "masterKeyOnly": ["a": "yes"]],
        ] {
            let r = try server.json("PUT", "/parse/config", body)
            #expect(r.status == 400 && F.code(r) == 107, "\(body): \(r.text)")
        }
        #expect(try server.request("GET", "/parse/config", appID: "wrong").status == 403)
    }

    @Test func unknownFunctionsAndJobs_AreParseErrors_NotPages() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let user = try server.makeUser("alice")
        for method in ["POST", "GET"] {
            let r = try server.request(
                method, "/parse/functions/hello", body: method == "POST" ? Data("{}".utf8) : nil, headers: user.headers)
            #expect(r.status == 400 && F.code(r) == 141, "\(r.text)")
            #expect(r.json["error"] as? String == #"Invalid function: "hello""#)
            #expect(r.header("Content-Type")?.hasPrefix("application/json") == true)
        }
        let job = try server.json("POST", "/parse/jobs/nightly", [:] as [String: Any])
        #expect(
            job.status == 400 && F.code(job) == 141 && job.json["error"] as? String == #"Invalid job: "nightly""#,
            "\(job.text)")
        #expect(
            try server.json("POST", "/parse/jobs/nightly", [:] as [String: Any], headers: user.headers).status == 403)
        #expect(try server.request("POST", "/parse/functions/hello", appID: "wrong").status == 403)
        // The queue's own job route still answers.
        #expect(try server.json("POST", "/parse/jobs/retry", ["status": "failed"]).status == 200)
    }
}
