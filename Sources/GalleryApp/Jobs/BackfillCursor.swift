import Logging
import Postgres
import Synchronization

/// Where one backfill pass over the photos stands: the last objectId looked at, how many photos it
/// passed over, and whether it reached the end. The backfills share it and differ only in which
/// photos they select and what they write.
final class BackfillCursor: Sendable {
    /// The last objectId looked at, and how many photos were passed over.
    private let progress = Mutex<(after: String, failed: Int)>(("", 0))
    /// The pass has looked at every photo.
    private let finished = Atomic<Bool>(false)

    var isFinished: Bool { finished.load(ordering: .relaxed) }

    /// The next photos of `select` (`$1`: the last objectId looked at, `$2`: `limit`; in objectId
    /// order), or nil when the pass is over: it is then finished, and the photos passed over, if
    /// any, are logged once with `unreadable`.
    func nextBatch(
        _ select: String, limit: Int, pool: PostgresPool, logger: Logger, unreadable: Logger.Message
    ) throws -> PostgresResult? {
        guard !isFinished else { return nil }
        let after = progress.withLock { $0.after }
        let rows = try pool.query(select, [after, limit], retry: .safe)
        guard rows.last == nil else { return rows }
        finished.store(true, ordering: .relaxed)
        let failed = progress.withLock { $0.failed }
        if failed > 0 { logger.warning(unreadable, metadata: ["photos": "\(failed)"]) }
        return nil
    }

    /// Moves the pass past `rows` (a batch `nextBatch` gave), `failed` of which were passed over.
    func advance(past rows: PostgresResult, failed: Int) throws {
        guard let last = rows.last else { return }
        let next = try last.decode(String.self, "object_id")
        progress.withLock { $0 = (next, $0.failed + failed) }
    }
}
