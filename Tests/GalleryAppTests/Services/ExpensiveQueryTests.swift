import Foundation
import Postgres
import Testing

@testable import GalleryApp

/// Expensive query shapes cannot starve cheap ones: they are recognised, wait for their own few
/// slots (503 when none frees up) with a shorter statement timeout, and `skip` is capped with a
/// pointer to the keyset cursor.
@Suite(.serialized) struct ExpensiveQueryTests {
    static func find(_ items: [(String, String)]) throws -> ParseQuery {
        try ParseQuery.find(.photo, items: items.map { (name: $0.0, value: $0.1) })
    }

    @Test func isExpensive_ForUnanchoredRegexesAndDeepSkips_NotForIndexedShapes() throws {
        #expect(try Self.find([("where", #"{"title":{"$regex":"sunset"}}"#)]).isExpensive)
        #expect(
            try Self.find([("where", #"{"$or":[{"title":"a"},{"filename":{"$regex":"IMG","$options":"i"}}]}"#)])
                .isExpensive)
        #expect(try Self.find([("skip", "1001")]).isExpensive)
        #expect(
            try !Self.find([("where", #"{"title":{"$regex":"^sun"}}"#)]).isExpensive,
            "an anchored prefix is an index range")
        #expect(try !Self.find([("skip", "1000"), ("limit", "50")]).isExpensive)
        #expect(try !Self.find([("where", #"{"status":"ready"}"#), ("count", "1")]).isExpensive)
        #expect(try !Self.find([]).isExpensive)
    }

    @Test func isExpensive_ForCountsNoIndexNarrows_NotForIndexedOrUnfilteredCounts() throws {
        // Counted scans: every live photo is read to count these.
        #expect(try Self.find([("where", #"{"width":{"$gt":100}}"#), ("count", "1"), ("limit", "0")]).isExpensive)
        #expect(try Self.find([("where", #"{"status":{"$ne":"ready"}}"#), ("count", "1")]).isExpensive)
        #expect(try Self.find([("where", #"{"$or":[{"status":"ready"},{"height":10}]}"#), ("count", "1")]).isExpensive)
        // An index narrows these, or the row counter answers.
        #expect(try !Self.find([("count", "1"), ("limit", "0")]).isExpensive)
        #expect(try !Self.find([("where", #"{"width":{"$gt":100},"status":"ready"}"#), ("count", "1")]).isExpensive)
        #expect(try !Self.find([("where", #"{"tags":"beach"}"#), ("count", "1")]).isExpensive)
        #expect(try !Self.find([("where", #"{"title":{"$regex":"^sun"}}"#), ("count", "1")]).isExpensive)
        #expect(
            try !Self.find([("where", #"{"title":{"$text":{"$search":{"$term":"beach"}}}}"#), ("count", "1")])
                .isExpensive)
        // The same unindexed filter without a count reads only a page.
        #expect(try !Self.find([("where", #"{"width":{"$gt":100}}"#), ("limit", "20")]).isExpensive)
    }

    @Test func skip_Beyond10000_Is102_PointingToTheKeysetCursor() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let deep = try server.request("GET", "/parse/classes/Photo?skip=10001")
        #expect(deep.status == 400)
        #expect(deep.json["code"] as? Int == 102)
        #expect((deep.json["error"] as? String)?.contains("keyset cursor") == true, "\(deep.text)")
        #expect(try server.request("GET", "/parse/classes/Photo?skip=10000").status == 200)
    }

    @Test func expensiveQueries_WaitForTheirOwnSlots_WhileCheapPagesKeepAnswering() throws {
        let server = try TestServer(workers: 0) {
            $0.expensiveQueryLimit = 1
            $0.poolTimeoutMs = 500
        }
        defer { server.stop() }
        _ = try server.insertPhotos(3)
        let application = server.application
        // Something expensive holds the only slot.
        let release = DispatchSemaphore(value: 0)
        let holding = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        Thread {
            _ = try? application.expensiveQueries.run(on: application.pool) { _ in
                holding.signal()
                release.wait()
            }
            finished.signal()
        }.start()
        holding.wait()
        let regex = "/parse/classes/Photo?where=" + TestServer.queryValue(#"{"filename":{"$regex":"row"}}"#)
        let waited = try server.request("GET", regex)
        #expect(waited.status == 503)
        #expect(waited.json["code"] as? Int == 1)
        #expect(waited.header("Retry-After") != nil)
        // Cheap shapes are not behind it.
        let page = try server.request("GET", "/parse/classes/Photo?limit=2")
        #expect(page.status == 200)
        #expect(
            try server.request(
                "GET", "/parse/classes/Photo?where=" + TestServer.queryValue(#"{"filename":{"$regex":"^row"}}"#)
            ).status == 200)
        release.signal()
        finished.wait()
        let answered = try server.request("GET", regex)
        #expect(answered.status == 200)
        #expect((answered.json["results"] as? [Any])?.count == 3)
    }

    @Test func expensiveQueries_RunUnderTheShorterStatementTimeout() throws {
        let server = try TestServer(workers: 0) { $0.expensiveStatementTimeoutMs = 150 }
        defer { server.stop() }
        let gate = server.application.expensiveQueries
        let pool = server.application.pool
        let setting = try gate.run(on: pool) { try $0.query("show statement_timeout").first!.decode(String.self, 0) }
        #expect(setting == "150ms")
        #expect {
            try gate.run(on: pool) { _ = try $0.query("select pg_sleep(2)") }
        } throws: { error in
            (error as? PostgresError)?.sqlState == .queryCanceled
        }
        // Only inside the gate: ordinary statements keep the configured timeout.
        let ordinary = try pool.query("show statement_timeout").first!.decode(String.self, 0)
        #expect(ordinary == "10s")
    }
}
