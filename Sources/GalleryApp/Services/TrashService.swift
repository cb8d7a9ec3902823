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

    /// Photos deleted per statement. Each deleted row runs the row counter trigger, which updates
    /// the same `row_counts` row; within one transaction every update walks the chain of versions
    /// the earlier ones left, so one statement over n rows costs O(n²) (50,000 rows: ~30 s, past
    /// the statement timeout). Batches keep each transaction's chain short.
    public static let deleteBatchSize = 500

    /// Deletes the trashed photos with these ids (live ones are left alone) and their blobs.
    /// Returns the ids actually deleted.
    @discardableResult
    public func deletePhotos(_ objectIds: [String]) throws -> [String] {
        var deleted: [String] = []
        var start = 0
        while start < objectIds.count {
            let batch = Array(objectIds[start..<min(start + Self.deleteBatchSize, objectIds.count)])
            start += batch.count
            let rows = try pool.query(
                """
                delete from photos where object_id = any($1) and deleted_at is not null
                returning object_id, checksum, original_key, thumbnail_key, preview_key
                """, [batch])
            deleted += try releaseBlobs(of: rows)
        }
        return deleted
    }

    /// Deletes every photo in the trash (`DELETE /purge/Photo`), batch by batch. Returns how many.
    @discardableResult
    public func deleteAllTrashedPhotos() throws -> Int {
        try deleteTrashedPhotos(olderThanDays: nil)
    }

    /// Purges photos and galleries trashed more than `days` days ago. Returns how many of each.
    public func purge(olderThanDays days: Int) throws -> (photos: Int, galleries: Int) {
        let photos = try deleteTrashedPhotos(olderThanDays: days)
        let galleries = try pool.query(
            "delete from galleries where deleted_at < now() - make_interval(days => $1::int)", [days]).affectedRows
        if photos > 0 || galleries > 0 {
            logger.notice("purged trash", metadata: ["photos": "\(photos)", "galleries": "\(galleries)", "retentionDays": "\(days)"])
        }
        return (photos, galleries)
    }

    /// Deletes trashed photos (all, or those trashed more than `days` days ago) in batches of
    /// `deleteBatchSize`, each its own statement, until none are left.
    private func deleteTrashedPhotos(olderThanDays days: Int?) throws -> Int {
        var total = 0
        while true {
            let rows = try pool.query(
                """
                delete from photos where object_id in (
                    select object_id from photos
                    where deleted_at is not null and ($1::int is null or deleted_at < now() - make_interval(days => $1::int))
                    limit $2::int)
                returning object_id, checksum, original_key, thumbnail_key, preview_key
                """, [days, Self.deleteBatchSize])
            total += try releaseBlobs(of: rows).count
            if rows.count < Self.deleteBatchSize { return total }
        }
    }

    /// Deletes the derivatives of deleted photo rows, and each original with its `files` row once
    /// no photo refers to its checksum.
    private func releaseBlobs(of rows: PostgresResult) throws -> [String] {
        var deleted: [String] = []
        var checksums: [String] = []
        for row in rows {
            deleted.append(try row.decode(String.self, "object_id"))
            checksums.append(try row.decode(String.self, "checksum"))
            for column in ["thumbnail_key", "preview_key"] {
                if let key = try row.decode(String?.self, column) { _ = try? store.delete(BlobKey(key)) }
            }
        }
        guard !checksums.isEmpty else { return deleted }
        let released = try pool.query(
            """
            delete from files f where f.checksum = any($1)
            and not exists (select 1 from photos p where p.checksum = f.checksum)
            returning key
            """, [checksums])
        for file in released {
            _ = try? store.delete(BlobKey(try file.decode(String.self, "key")))
        }
        return deleted
    }
}
