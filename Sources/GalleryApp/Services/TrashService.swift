import BlobStore
import Foundation
import Logging
import Postgres

/// Removes trashed photos and galleries for good: on an explicit DELETE of a trashed row and
/// when the retention period has passed. A photo's derivatives go with it; its original (and
/// the `files` row) go once no photo refers to those bytes any more.
public struct TrashService: Sendable {
    let pool: PostgresPool
    let store: LocalBlobStore
    let logger: Logger

    public init(pool: PostgresPool, store: LocalBlobStore, logger: Logger) {
        self.pool = pool
        self.store = store
        self.logger = logger
    }

    /// Deletes the trashed photos with these ids (live ones are left alone) and their blobs.
    /// Returns the ids actually deleted.
    @discardableResult
    public func deletePhotos(_ objectIds: [String]) throws -> [String] {
        guard !objectIds.isEmpty else { return [] }
        let rows = try pool.query(
            """
            delete from photos where object_id = any($1) and deleted_at is not null
            returning object_id, checksum, original_key, thumbnail_key, preview_key
            """, [objectIds])
        return try releaseBlobs(of: rows)
    }

    /// Purges photos and galleries trashed more than `days` days ago. Returns how many of each.
    public func purge(olderThanDays days: Int) throws -> (photos: Int, galleries: Int) {
        let photoRows = try pool.query(
            """
            delete from photos where deleted_at < now() - make_interval(days => $1::int)
            returning object_id, checksum, original_key, thumbnail_key, preview_key
            """, [days])
        let photos = try releaseBlobs(of: photoRows).count
        let galleries = try pool.query(
            "delete from galleries where deleted_at < now() - make_interval(days => $1::int)", [days]).affectedRows
        if photos > 0 || galleries > 0 {
            logger.notice("purged trash", metadata: ["photos": "\(photos)", "galleries": "\(galleries)", "retentionDays": "\(days)"])
        }
        return (photos, galleries)
    }

    /// Deletes the derivatives of deleted photo rows, and each original with its `files` row once
    /// no photo refers to its checksum.
    private func releaseBlobs(of rows: PostgresResult) throws -> [String] {
        var deleted: [String] = []
        for row in rows {
            let objectId = try row.decode(String.self, "object_id")
            deleted.append(objectId)
            for column in ["thumbnail_key", "preview_key"] {
                if let key = try row.decode(String?.self, column) { _ = try? store.delete(BlobKey(key)) }
            }
            let checksum = try row.decode(String.self, "checksum")
            let released = try pool.query(
                """
                delete from files where checksum = $1
                and not exists (select 1 from photos where checksum = $1)
                returning key
                """, [checksum])
            for file in released {
                _ = try? store.delete(BlobKey(try file.decode(String.self, "key")))
            }
        }
        return deleted
    }
}
