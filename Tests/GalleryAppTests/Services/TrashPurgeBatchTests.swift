import Foundation
import Testing

@testable import GalleryApp

/// A purge deletes trashed photos in batches of `TrashService.purgeBatchSize` (500) per
/// transaction (issue #26, item 8), by `DELETE /purge/Photo`, by ids and by the retention purge:
/// each transaction stays short and no purge loads every id at once.
struct TrashPurgeBatchTests {
    /// Records the transaction of every deleted photo row, so a test sees how a purge was split.
    private func recordDeletingTransactions(_ server: TestServer) throws {
        let pool = server.application.pool
        try pool.query("create table deleted_photo_tx (object_id text, tx bigint)")
        try pool.query(
            """
            create function record_deleted_photo_tx() returns trigger language plpgsql as $$
            begin insert into deleted_photo_tx values (old.object_id, txid_current()); return old; end $$
            """)
        try pool.query(
            "create trigger photos_record_deleted_tx after delete on photos for each row execute function record_deleted_photo_tx()"
        )
    }

    /// How many rows each transaction deleted, largest first.
    private func rowsPerTransaction(_ server: TestServer) throws -> [Int] {
        try server.application.pool.query(
            "select count(*) as n from deleted_photo_tx group by tx order by n desc"
        ).map { try $0.decode(Int.self, "n") }
    }

    private func trash(_ server: TestServer, _ ids: [String], daysAgo: Int) throws {
        try server.application.pool.query(
            "update photos set deleted_at = now() - make_interval(days => $2::int) where object_id = any($1)",
            [ids, daysAgo])
    }

    private func photoCount(_ server: TestServer) throws -> Int {
        try server.application.pool.query("select count(*) from photos")[0].decode(Int.self, 0)
    }

    @Test func purgeAll_OverMoreThan500TrashedPhotos_DeletesThemIn500PerTransaction() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        try recordDeletingTransactions(server)
        let owner = try server.makeUser("alice")
        let trashed = try server.insertPhotos(1_030, owner: owner.objectId)
        let live = try server.insertPhotos(3, owner: owner.objectId)
        try trash(server, trashed, daysAgo: 0)

        let purge = try server.request(
            "DELETE", "/parse/purge/Photo", headers: ["X-Parse-Master-Key": TestServer.masterKey])
        #expect(purge.status == 200, "\(purge.text)")
        #expect(try rowsPerTransaction(server) == [500, 500, 30])
        #expect(try photoCount(server) == live.count)
        let counts = try F.find(server, ["count": "1", "limit": "0"], headers: owner.headers)
        #expect(counts.json["count"] as? Int == live.count)
    }

    @Test func deleteByIds_AndRetentionPurge_BatchToo_AndLeaveLiveAndRecentPhotos() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        try recordDeletingTransactions(server)
        let owner = try server.makeUser("alice")
        let old = try server.insertPhotos(620, owner: owner.objectId)
        let recent = try server.insertPhotos(4, owner: owner.objectId)
        let live = try server.insertPhotos(2, owner: owner.objectId)
        try trash(server, old, daysAgo: 40)
        try trash(server, recent, daysAgo: 1)

        let purged = try server.application.trash.purge(olderThanDays: 30)
        #expect(purged.photos == old.count)
        #expect(try rowsPerTransaction(server) == [500, 120])
        #expect(try photoCount(server) == recent.count + live.count)

        // By ids (live ones named too are left alone): 503 ids, two transactions of at most 500.
        let more = try server.insertPhotos(497, owner: owner.objectId)
        try trash(server, more, daysAgo: 0)
        try server.application.pool.query("delete from deleted_photo_tx")
        let deleted = try server.application.trash.deletePhotos(more + recent + live)
        #expect(Set(deleted) == Set(more + recent))
        let perTransaction = try rowsPerTransaction(server)
        #expect(perTransaction.count == 2)
        #expect(perTransaction.reduce(0, +) == more.count + recent.count)
        #expect(perTransaction.allSatisfy { $0 <= 500 })
        #expect(try photoCount(server) == live.count)
    }

    private typealias F = ManifestFixtures
}
