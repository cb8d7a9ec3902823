import Foundation
import Postgres
import Testing

@testable import GalleryApp

/// The O(1) class counters (`row_counts`) against the tables they count, through statements over
/// many rows at once: bulk loads and deletes are counted per statement (migrations/0004), trash
/// and restore per row.
@Suite struct RowCounterTests {
    @Test func counters_FollowBulkInsertsDeletesTrashAndRestore() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let pool = server.application.pool
        func expectCountersMatch(_ step: String) throws {
            for table in ["photos", "galleries"] {
                let counters = try pool.query(
                    "select n from row_counts where name = $1 union all select n from row_counts where name = $2",
                    [table + "_live", table + "_trashed"]
                ).map { try $0.decode(Int64.self, 0) }
                let actual = try pool.query(
                    "select count(*) filter (where deleted_at is null), count(*) filter (where deleted_at is not null) from \(table)"
                ).first!
                #expect(
                    counters == [try actual.decode(Int64.self, 0), try actual.decode(Int64.self, 1)],
                    "\(table) after \(step)")
            }
        }
        // 20,000 rows in one INSERT: with 0001's per-row trigger this alone took about 10 s.
        try ManifestFixtures.insertMany(server, count: 20_000)
        try expectCountersMatch("bulk insert")
        try pool.query("update photos set deleted_at = now() where object_id <= 'p000005000'")
        try expectCountersMatch("bulk trash")
        try pool.query("update photos set deleted_at = null where object_id <= 'p000001000'")
        try expectCountersMatch("bulk restore")
        try pool.query("delete from photos where deleted_at is not null and object_id <= 'p000004000'")
        try expectCountersMatch("bulk delete of trashed rows")
        try pool.query("delete from photos where object_id > 'p000019000'")
        try expectCountersMatch("bulk delete of live rows")
        // An insert that adds nothing (a duplicate) changes nothing.
        try pool.query(
            """
            insert into photos (object_id, filename, title, tags, byte_size, checksum, width, height, aspect_ratio,
                status, original_key)
            select object_id, filename, title, tags, byte_size, checksum, width, height, aspect_ratio, status, original_key
            from photos where object_id = 'p000010000'
            on conflict do nothing
            """)
        try expectCountersMatch("an empty insert")

        try pool.query(
            "insert into galleries (object_id, name, deleted_at) select 'g' || lpad(i::text, 9, '0'), 'G' || i, "
                + "case when i % 4 = 0 then now() end from generate_series(1, 400) i")
        try expectCountersMatch("galleries inserted, a quarter already trashed")
        try pool.query("update galleries set deleted_at = now() where object_id <= 'g000000100'")
        try pool.query("delete from galleries where deleted_at is not null and object_id > 'g000000300'")
        try expectCountersMatch("galleries trashed and deleted")

        // The Parse count reads the counter.
        let count = try server.request("GET", "/parse/classes/Photo?count=1&limit=0")
        let live = try pool.query("select count(*) from photos where deleted_at is null").first!.decode(Int64.self, 0)
        #expect(count.json["count"] as? Int == Int(live))
    }
}
