import Foundation
import HTTPServer
import Logging
import Postgres
import Testing

@testable import GalleryApp

@Suite(.serialized) struct OperationsTests {
    @Test func health_IsOK_AtTheRootAndUnderTheMount() throws {
        let server = try InProcessServer()
        defer { server.stop() }
        for path in ["/health", "/parse/health"] {
            let r = server.request("GET", path, appID: nil)
            #expect(r.status == 200)
            #expect(r.json["status"] as? String == "ok")
        }
    }

    @Test func ready_IsOK_WhenTheDatabaseAnswersAndMigrationsAreCurrent() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        #expect(try server.request("GET", "/ready", appID: nil).status == 200)
        // Forget the last migration: no longer current.
        try server.application.pool.query(
            "delete from schema_migrations where version = (select max(version) from schema_migrations)")
        let r = try server.request("GET", "/ready", appID: nil)
        #expect(r.status == 503)
        #expect((r.json["reason"] as? String)?.contains("migrations") == true)
    }

    @Test func ready_WithTheDatabaseDown_SaysSoGenerically_TheDriverTextOnlyToTheMasterKey() throws {
        // Nothing listens on port 9 of loopback; the URL names a user and database an attacker would like to learn.
        let pool = PostgresPool(
            configuration: PostgresPoolConfiguration(
                url: "postgresql://secret_operator@127.0.0.1:9/secret_db", size: 1, acquireTimeout: 5, connectTimeout: 2
            ))
        defer { pool.shutdown() }
        let router = HTTPRouter()
        let keys = KeyChecker(appID: TestServer.appID, restKey: nil, masterKey: TestServer.masterKey)
        OperationsRoutes(
            configuration: GalleryConfiguration(), pool: pool, migrator: Migrator(pool: pool, migrations: []),
            metrics: GalleryMetrics(), keys: keys, logger: Logger(label: "test")
        ).register(on: router, mount: router.group())
        let route = try #require(router.route(method: .get, path: "/ready")).route
        func ready(_ headers: HTTPHeaders) throws -> (status: Int, reason: String) {
            let response = try route.handler.handle(HTTPRequest(method: .get, target: "/ready", headers: headers))
            guard case .bytes(let body) = response.body,
                let json = try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any]
            else { return (response.status.code, "") }
            return (response.status.code, json["reason"] as? String ?? "")
        }
        let anyone = try ready([:])
        #expect(anyone.status == 503)
        #expect(anyone.reason == "database unreachable")
        let master = try ready(["X-Parse-Master-Key": TestServer.masterKey])
        #expect(master.status == 503)
        #expect(
            master.reason.hasPrefix("database unreachable: ") && master.reason.contains("127.0.0.1"), "\(master.reason)"
        )
    }

    @Test func metrics_NeedTheMasterKey_AndCountRequestsByRoutePattern() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        #expect(try server.request("GET", "/metrics", appID: nil).status == 401)
        func count(_ text: String, _ series: String) -> Double {
            for line in text.split(separator: "\n") where line.hasPrefix(series + " ") {
                return Double(line.split(separator: " ").last!) ?? -1
            }
            return 0
        }
        let series =
            "galleryd_http_requests_total{route=\"/parse/classes/:className/:objectId\",method=\"GET\",status=\"404\"}"
        let before = try server.request("GET", "/metrics", headers: ["X-Parse-Master-Key": TestServer.masterKey]).text
        for _ in 0..<3 { _ = try server.request("GET", "/parse/classes/Photo/nosuchid00") }
        let after = try server.request("GET", "/metrics", headers: ["Authorization": "Bearer \(TestServer.masterKey)"])
        #expect(after.status == 200)
        #expect(after.header("Content-Type")?.hasPrefix("text/plain; version=0.0.4") == true)
        #expect(count(after.text, series) == count(before, series) + 3)
        #expect(after.text.contains("galleryd_db_pool_size "))
        #expect(after.text.contains("galleryd_jobs{state=\"queued\"}"))
        #expect(after.text.contains("galleryd_http_open_connections "))
        // Labels are route patterns, never raw ids.
        #expect(!after.text.contains("nosuchid00"))
    }

    @Test func metrics_ArePublic_WhenConfigured() throws {
        let server = try InProcessServer { $0.metricsPublic = true }
        defer { server.stop() }
        #expect(server.request("GET", "/metrics", appID: nil).status == 200)
    }

    /// On the wire each event loop counts its own requests (decision 041, round 8): every scrape
    /// shows each request once, whichever loop served it, and a scrape adds nothing by itself.
    @Test func metrics_OnTheWire_CountEveryRequestOnce_AtEachScrape() throws {
        let server = try TestServer(workers: 0, listening: true)
        defer { server.stop() }
        func scrape() throws -> String {
            try server.request("GET", "/metrics", headers: ["X-Parse-Master-Key": TestServer.masterKey], appID: nil)
                .text
        }
        func value(_ text: String, _ series: String) -> Int {
            for line in text.split(separator: "\n") where line.hasPrefix(series + " ") {
                return Int(line.split(separator: " ").last!) ?? -1
            }
            return 0
        }
        let health = "galleryd_http_requests_total{route=\"/health\",method=\"GET\",status=\"200\"}"
        let durations = "galleryd_http_request_duration_seconds_count{route=\"/health\"}"
        let before = try scrape()
        for _ in 0..<12 { #expect(try server.request("GET", "/health", appID: nil).status == 200) }
        let after = try scrape()
        #expect(value(after, health) == value(before, health) + 12)
        #expect(value(after, durations) == value(before, durations) + 12)
        let again = try scrape()
        #expect(value(again, health) == value(after, health))
        #expect(value(again, durations) == value(after, durations))
    }
}
