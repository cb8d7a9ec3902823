import BlobStore
import Foundation
import Imaging
import Logging
import Postgres
import Synchronization

/// Gives photos stored before migration 0027 their `cameraMake`/`cameraModel`: a bounded
/// background pass of the worker, never in a request. Each batch takes the next few photos without
/// a camera not yet checked (`camera_checked` null, migration 0029; in objectId order, from where
/// the last batch stopped), reads their original's header (`ImageProbe`, the upload's own EXIF reading) and writes
/// the camera, if any, marking the photo checked either way. An original that is missing or not a
/// readable image is marked checked too (counted, logged once at the end of the pass), so it is
/// not read again; any other failure (the store unreachable) leaves the photo for the next process,
/// and the pass still moves on. Once the pass reaches the last photo it is over for this process.
final class CameraBackfill: Backfill {
    private let pool: PostgresPool
    private let store: any BlobStore
    private let spoolDirectory: String
    private let limits: ImageLimits
    private let maxOriginalBytes: Int64
    private let logger: Logger
    /// How far the pass has gone.
    private let cursor = BackfillCursor()

    /// Photos per batch: reading a header is cheap, but a remote store fetches the whole original.
    static let batchSize = 16

    let name = "camera backfill"

    /// A backfill reading originals (up to `maxOriginalBytes`) from `store` through `pool`.
    init(
        pool: PostgresPool, store: any BlobStore, spoolDirectory: String, limits: ImageLimits,
        maxOriginalBytes: Int64, logger: Logger
    ) {
        self.pool = pool
        self.store = store
        self.spoolDirectory = spoolDirectory
        self.limits = limits
        self.maxOriginalBytes = maxOriginalBytes
        self.logger = logger
    }

    var isFinished: Bool { cursor.isFinished }

    func runBatch() throws -> Int { try runBatch(limit: Self.batchSize) }

    /// Reads the camera of the next `limit` unchecked photos; returns how many it checked, with or
    /// without a camera (0 when none was left: the backfill is then finished).
    @discardableResult
    func runBatch(limit: Int) throws -> Int {
        guard
            let rows = try cursor.nextBatch(
                """
                select object_id, original_key from photos
                where camera_checked is null and camera_make is null and camera_model is null and object_id > $1
                order by object_id limit $2
                """, limit: limit, pool: pool, logger: logger,
                unreadable: "camera backfill done; some photos' originals could not be read")
        else { return 0 }
        var checked = 0
        var failed = 0
        for row in rows {
            let id = try row.decode(String.self, "object_id")
            let original = try row.decode(String.self, "original_key")
            let camera: (make: String?, model: String?)
            do {
                camera = try read(original)
            } catch let error as ImageError {
                failed += 1
                logger.debug("no camera for a photo", metadata: ["photo": "\(id)", "error": "\(error)"])
                camera = (nil, nil)
            } catch BlobStoreError.notFound {
                failed += 1
                logger.debug("no camera for a photo: its original is missing", metadata: ["photo": "\(id)"])
                camera = (nil, nil)
            } catch {
                failed += 1
                logger.debug("camera not read; left for later", metadata: ["photo": "\(id)", "error": "\(error)"])
                continue
            }
            // Only while still unchecked and unset (a re-upload of the same bytes writes both).
            try pool.query(
                """
                update photos set camera_make = $2, camera_model = $3, camera_checked = true
                where object_id = $1 and camera_checked is null and camera_make is null and camera_model is null
                """, [id, camera.make, camera.model])
            checked += 1
        }
        try cursor.advance(past: rows, failed: failed)
        return checked
    }

    /// The camera in the original's EXIF; throws `BlobStoreError.notFound` when it is gone.
    private func read(_ original: String) throws -> (make: String?, model: String?) {
        let info = try store.withLocalFile(
            BlobKey(original), spoolDirectory: spoolDirectory, maxBytes: maxOriginalBytes
        ) {
            try ImageProbe.probe(fileAt: $0, limits: limits)
        }
        guard let info else { throw BlobStoreError.notFound(original) }
        return (info.cameraMake, info.cameraModel)
    }
}
