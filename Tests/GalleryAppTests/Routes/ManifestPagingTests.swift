import Foundation
import Synchronization
import Testing

@testable import GalleryApp

/// Keyset paging through the manifest while photos keep arriving.
@Suite struct ManifestPagingTests {
    typealias F = ManifestFixtures

    /// A flag and a counter shared with the inserting thread.
    final class Inserter: Sendable {
        private struct State {
            var stopped = false
            var inserted = 0
            var failure: String?
        }
        private let state = Mutex(State())

        var inserted: Int { state.withLock { $0.inserted } }
        var failure: String? { state.withLock { $0.failure } }
        var isStopped: Bool { state.withLock { $0.stopped } }
        func stop() { state.withLock { $0.stopped = true } }
        func record(_ count: Int) { state.withLock { $0.inserted += count } }
        func fail(_ message: String) { state.withLock { $0.failure = message } }
    }

    /// The keyset cursor after `row` for `order=-createdAt` (objectId breaks ties, descending).
    static func cursorAfter(_ row: [String: Any], ascending: Bool) -> [String: Any] {
        let createdAt: [String: Any] = ["__type": "Date", "iso": row["createdAt"] as! String]
        let id = row["objectId"] as! String
        let op = ascending ? "$gt" : "$lt"
        return ["$or": [["createdAt": [op: createdAt]], ["createdAt": createdAt, "objectId": [op: id]]]]
    }

    /// Walks every page with the keyset cursor; returns the ids in the order seen.
    static func walk(_ server: TestServer, pageSize: Int, ascending: Bool, extra: [String: Any] = [:]) throws
        -> [String]
    {
        var seen: [String] = []
        var cursor: [String: Any]?
        while true {
            var condition = extra
            if let cursor { condition.merge(cursor) { a, _ in a } }
            var items = ["order": ascending ? "createdAt" : "-createdAt", "limit": String(pageSize)]
            if !condition.isEmpty { items["where"] = F.json(condition) }
            let r = try F.find(server, items)
            guard r.status == 200 else { throw TestSetupError(description: "page failed: \(r.status) \(r.text)") }
            let rows = F.results(r)
            seen += rows.map { $0["objectId"] as! String }
            guard rows.count == pageSize, let last = rows.last else { return seen }
            cursor = cursorAfter(last, ascending: ascending)
        }
    }

    @Test func keysetPaging_HasNoDuplicatesOrGaps_WhilePhotosArrive() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        // 600 photos in groups of four sharing a createdAt, so pages end in the middle of ties.
        try F.insertMany(
            server, count: 600, prefix: "p", start: Date(timeIntervalSince1970: 1_700_000_000), stepMs: 1000,
            sameTimeEvery: 4)
        let initial = try server.application.pool.query(
            "select object_id from photos order by created_at desc, object_id desc"
        ).map { try $0.decode(String.self, 0) }
        #expect(initial.count == 600)

        // Meanwhile: new uploads (newest createdAt) and rows that land inside the walked range,
        // sharing timestamps with existing rows and with ids on both sides of theirs.
        let inserter = Inserter()
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            defer { done.signal() }
            var n = 0
            while !inserter.isStopped && n < 5000 {
                n += 1
                do {
                    let slot = (n * 37) % 150  // one of the seeded timestamps
                    let seeded = Date(timeIntervalSince1970: 1_700_000_000 + Double(slot))
                    try F.insert(
                        server,
                        [
                            F.Row(id: String(format: "n%09d", n), createdAt: Date()),
                            F.Row(id: String(format: "a%09d", n), createdAt: seeded),
                            F.Row(id: String(format: "z%09d", n), createdAt: seeded),
                        ])
                    inserter.record(3)
                } catch {
                    inserter.fail("\(error)")
                    return
                }
            }
        }
        thread.start()
        var walked: [String] = []
        do {
            defer { inserter.stop() }
            // Let some inserts land first, then walk in small pages.
            while inserter.inserted < 30 && inserter.failure == nil { Thread.sleep(forTimeInterval: 0.01) }
            walked = try Self.walk(server, pageSize: 7, ascending: false)
        }
        done.wait()
        #expect(inserter.failure == nil, "\(inserter.failure ?? "")")
        #expect(inserter.inserted > 30)
        #expect(Set(walked).count == walked.count, "a row was returned twice")
        let initialSet = Set(initial)
        #expect(
            walked.filter { initialSet.contains($0) } == initial,
            "rows that existed at the start were skipped or reordered")

        // Now that nothing moves: the walk sees everything, in both directions, and with a filter.
        let everything = try server.application.pool.query(
            "select object_id from photos order by created_at desc, object_id desc"
        ).map { try $0.decode(String.self, 0) }
        #expect(try Self.walk(server, pageSize: 50, ascending: false) == everything)
        #expect(try Self.walk(server, pageSize: 33, ascending: true) == everything.reversed())
        let pOnly = try Self.walk(server, pageSize: 9, ascending: false, extra: ["objectId": ["$regex": "^p"]])
        #expect(pOnly == initial)
    }

    @Test func keysetCursor_CompilesToARowComparison_AndOtherOrsStayOrs() throws {
        func sql(_ condition: Any) throws -> String {
            let query = try ParseQuery.find(.photo, items: [("where", F.json(condition))])
            let compiled = ParseSQLCompiler.compile(query)
            let select = try #require(compiled.select)
            return String(select.sql[try #require(select.sql.range(of: " where ")).upperBound...])
                .components(separatedBy: " order by ")[0]
        }
        let date: [String: Any] = ["__type": "Date", "iso": "2024-01-02T03:04:05.678Z"]
        let descending = try sql([
            "$or": [["createdAt": ["$lt": date]], ["createdAt": date, "objectId": ["$lt": "abc"]]]
        ])
        #expect(descending == "(t.created_at, t.object_id) < ($1::timestamptz, $2::text) and t.deleted_at is null")
        let ascending = try sql([
            "$or": [["objectId": ["$gt": "abc"], "updatedAt": ["$eq": date]], ["updatedAt": ["$gt": date]]]
        ])
        #expect(ascending == "(t.updated_at, t.object_id) > ($1::timestamptz, $2::text) and t.deleted_at is null")
        // Not the keyset shape: mixed directions, different values, a third condition.
        let mixed = try sql(["$or": [["createdAt": ["$lt": date]], ["createdAt": date, "objectId": ["$gt": "abc"]]]])
        #expect(
            mixed.hasPrefix(
                "(t.created_at < $1::timestamptz or (t.created_at = $2::timestamptz and t.object_id > $3::text))"))
        let other: [String: Any] = ["__type": "Date", "iso": "2024-01-02T03:04:05.679Z"]
        let different = try sql([
            "$or": [["createdAt": ["$lt": date]], ["createdAt": other, "objectId": ["$lt": "abc"]]]
        ])
        #expect(different.contains(" or "))
        let third = try sql([
            "$or": [["createdAt": ["$lt": date]], ["createdAt": date, "objectId": ["$lt": "abc"], "width": 1]]
        ])
        #expect(third.contains(" or "))
    }

    @Test func keysetCursor_IsAnIndexRange_InTheGenericPlan() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        try F.insertMany(server, count: 5000, sameTimeEvery: 2)
        try server.application.pool.execute("analyze photos")
        let date: [String: Any] = ["__type": "Date", "iso": "2020-09-13T12:40:00.000Z"]
        let query = try ParseQuery.find(
            .photo,
            items: [
                (
                    "where",
                    F.json([
                        "$or": [["createdAt": ["$lt": date]], ["createdAt": date, "objectId": ["$lt": "p000000500"]]]
                    ])
                ),
                ("limit", "20"),
            ])
        let select = try #require(ParseSQLCompiler.compile(query).select)
        let plan = try server.application.pool.transaction { connection -> String in
            try connection.execute("set local plan_cache_mode = force_generic_plan")
            try connection.execute("prepare keyset_probe as " + select.sql)
            let args = select.binds.map { value -> String in
                switch value {
                case .text(let text): return "'\(text)'"
                case .int(let int): return String(int)
                case .timestamp(let date): return "'\(ParseDate.format(date))'"
                default: return "null"
                }
            }
            let rows = try connection.query("explain execute keyset_probe(" + args.joined(separator: ", ") + ")")
            try connection.execute("deallocate keyset_probe")
            return try rows.map { try $0.decode(String.self, 0) }.joined(separator: "\n")
        }
        #expect(plan.contains("photos_live_created_idx"), "\(plan)")
        #expect(plan.contains("Index Cond: (ROW(created_at, object_id) < ROW($1, $2))"), "\(plan)")
        #expect(!plan.contains("Sort"), "\(plan)")
    }

    @Test func keysetPaging_SkipsTrashedPhotos_AndCountsStayExact() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        try F.insertMany(server, count: 200, sameTimeEvery: 3)
        try server.application.pool.query("update photos set deleted_at = now() where object_id like '%5'")
        let live = try server.application.pool.query(
            "select object_id from photos where deleted_at is null order by created_at desc, object_id desc"
        )
        .map { try $0.decode(String.self, 0) }
        #expect(live.count == 180)
        #expect(try Self.walk(server, pageSize: 11, ascending: false) == live)
        #expect(try F.find(server, ["count": "1", "limit": "0"]).json["count"] as? Int == 180)
        let trashed = try Self.walk(server, pageSize: 4, ascending: false, extra: ["deletedAt": ["$exists": true]])
        #expect(trashed.count == 20 && trashed.allSatisfy { $0.hasSuffix("5") })
    }
}
