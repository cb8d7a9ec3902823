import BlobStore
import Foundation
import Imaging
import Logging
import Postgres
import Synchronization

/// Gives photos processed before migration 0023 their ThumbHash: a bounded background pass of
/// the worker, never in a request. Each batch takes the next few photos without one (in objectId
/// order, from where the last batch stopped), hashes their stored thumbnail
/// (`SizeRenderer.thumbHash`) and writes it, so a find never waits for it and the record's
/// `thumbhash` appears once written. A photo whose thumbnail cannot be read or decoded is passed
/// over (counted, logged once at the end of the pass). Once the pass reaches the last photo, the
/// backfill is over for this process: photos processed since 0023 get one from the worker.
public final class ThumbHashBackfill: Backfill {
    private let pool: PostgresPool
    private let store: any BlobStore
    private let spoolDirectory: String
    private let limits: ImageLimits
    private let logger: Logger
    /// How far the pass has gone.
    private let cursor = BackfillCursor()

    /// Photos per batch: a worker between jobs spends at most a few tens of milliseconds on one.
    static let batchSize = 16

    /// A backfill reading thumbnails from `store` and writing hashes through `pool`.
    init(pool: PostgresPool, store: any BlobStore, spoolDirectory: String, limits: ImageLimits, logger: Logger) {
        self.pool = pool
        self.store = store
        self.spoolDirectory = spoolDirectory
        self.limits = limits
        self.logger = logger
    }

    public let name = "ThumbHash backfill"

    public var isFinished: Bool { cursor.isFinished }

    public func runBatch() throws -> Int { try runBatch(limit: Self.batchSize) }

    /// Hashes the next `limit` photos without a ThumbHash; returns how many got one (0 also when
    /// all of the batch failed, or when none was left: the backfill is then finished). One batch
    /// at a time (worker 0 runs it).
    @discardableResult
    func runBatch(limit: Int) throws -> Int {
        guard
            let rows = try cursor.nextBatch(
                """
                select object_id, thumbnail_key from photos
                where thumbhash is null and thumbnail_key is not null and object_id > $1
                order by object_id limit $2
                """, limit: limit, pool: pool, logger: logger,
                unreadable: "ThumbHash backfill done; some photos' thumbnails could not be read")
        else { return 0 }
        var done = 0
        var failed = 0
        for row in rows {
            let id = try row.decode(String.self, "object_id")
            let thumbnail = try row.decode(String.self, "thumbnail_key")
            do {
                let hash = try store.withLocalFile(
                    BlobKey(thumbnail), spoolDirectory: spoolDirectory, maxBytes: 64 << 20
                ) {
                    try SizeRenderer.thumbHash(fileAt: $0, limits: limits)
                }
                guard let hash, !hash.isEmpty else { throw BlobStoreError.notFound(thumbnail) }
                // Only while the thumbnail is still the one hashed (re-processing writes both).
                try pool.query(
                    "update photos set thumbhash = $2 where object_id = $1 and thumbhash is null and thumbnail_key = $3",
                    [id, Data(hash).base64EncodedString(), thumbnail])
                done += 1
            } catch {
                failed += 1
                logger.debug("no ThumbHash for a photo", metadata: ["photo": "\(id)", "error": "\(error)"])
            }
        }
        try cursor.advance(past: rows, failed: failed)
        return done
    }
}
