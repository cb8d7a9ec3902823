import BlobStore
import Foundation
import Logging
import Postgres

/// Removes trashed photos and galleries for good: on an explicit DELETE of a trashed row and
/// when the retention period has passed. A photo's derivatives go with it; its original (and
/// the `files` row) go once no photo refers to those bytes any more.
public struct TrashService: Sendable {
    let pool: PostgresPool
    let store: any BlobStore
    let logger: Logger

    public init(pool: PostgresPool, store: any BlobStore, logger: Logger) {
        self.pool = pool
        self.store = store
        self.logger = logger
    }

    /// Deletes the trashed photos with these ids (live ones are left alone) and their blobs.
    /// Returns the ids actually deleted.
    ///
    /// One statement (and transaction) per photo: deleting a photo locks it, then the galleries
    /// holding it (the trigger of migrations/0003_galleries.sql takes its items out and closes the
    /// gaps), and a statement holding several photos' galleries could deadlock with an item being
    /// removed. (The row counters are no reason any more: since migrations/0004 they change once
    /// per statement.)
    @discardableResult
    public func deletePhotos(_ objectIds: [String]) throws -> [String] {
        var deleted: [String] = []
        for objectId in Set(objectIds).sorted() {
            let rows = try pool.query(
                """
                delete from photos where object_id = $1 and deleted_at is not null
                returning object_id, checksum, original_key, thumbnail_key, preview_key
                """, [objectId])
            deleted += try releaseBlobs(of: rows)
        }
        return deleted
    }

    /// Deletes every photo in the trash (`DELETE /purge/Photo`). Returns how many.
    @discardableResult
    public func deleteAllTrashedPhotos() throws -> Int {
        let trashed = try pool.query("select object_id from photos where deleted_at is not null")
        return try deletePhotos(trashed.map { try $0.decode(String.self, "object_id") }).count
    }

    /// Purges photos and galleries trashed more than `days` days ago (the worker calls it with
    /// `trash_retention_days`). Returns how many of each. A purged gallery takes its items with it,
    /// never its photos; a purged photo leaves every gallery it was in with contiguous positions.
    public func purge(olderThanDays days: Int) throws -> (photos: Int, galleries: Int) {
        let expired = try pool.query(
            "select object_id from photos where deleted_at < now() - make_interval(days => $1::int) order by object_id", [days])
        var photos = 0
        for row in expired {
            // Checked again per photo: one restored meanwhile stays.
            let deleted = try pool.query(
                """
                delete from photos where object_id = $1 and deleted_at < now() - make_interval(days => $2::int)
                returning object_id, checksum, original_key, thumbnail_key, preview_key
                """, [try row.decode(String.self, "object_id"), days])
            photos += try releaseBlobs(of: deleted).count
        }
        let galleries = try deleteTrashedGalleries(olderThanDays: days)
        if photos > 0 || galleries > 0 {
            logger.notice("purged trash", metadata: ["photos": "\(photos)", "galleries": "\(galleries)", "retentionDays": "\(days)"])
        }
        return (photos, galleries)
    }

    /// Deletes galleries in Recently Deleted (all of them, or those trashed more than `days` days
    /// ago) with their items; their photos stay. Returns how many. The galleries are locked in
    /// objectId order first, the order a photo's trash trigger locks them in.
    @discardableResult
    public func deleteTrashedGalleries(olderThanDays days: Int? = nil) throws -> Int {
        try pool.query(
            """
            delete from galleries where object_id in (
                select object_id from galleries
                where deleted_at is not null and ($1::int is null or deleted_at < now() - make_interval(days => $1::int))
                order by object_id for update)
            """, [days]).affectedRows
    }

    /// Deletes one gallery in Recently Deleted with its items (never its photos). Returns whether
    /// there was one: a live gallery is left alone.
    public func deleteTrashedGallery(_ objectId: String) throws -> Bool {
        try pool.query("delete from galleries where object_id = $1 and deleted_at is not null", [objectId]).affectedRows == 1
    }

    /// Deletes the derivatives of deleted photo rows, and each original with its `files` row once
    /// no photo refers to its checksum and no upload of it waits to be attached.
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
        for checksum in Set(checksums).sorted() {
            try releaseFile(checksum: checksum, pendingOlderThanHours: nil)
        }
        return deleted
    }

    /// Deletes the `files` row for `checksum` and its original when no photo refers to those bytes
    /// and the file is not a pending upload (with `pendingOlderThanHours`, not one pending or
    /// recorded within that many hours: the orphan collector). Returns whether it was released.
    ///
    /// The row is locked first and the blob deleted before the lock is released: an upload of the
    /// same bytes (`UploadService.storeFile`) and a photo create (`createPhoto`) take the same lock,
    /// so either they run first and mark the file pending or attached (and it stays), or they run
    /// after and find no row (the upload writes the bytes again). "The bytes are stored and
    /// referenced" holds at every commit.
    @discardableResult
    func releaseFile(checksum: String, pendingOlderThanHours hours: Int?) throws -> Bool {
        let key: String? = try pool.transaction { connection -> String? in
            guard let file = try connection.query(
                """
                select key, pending_since is not null as pending,
                       coalesce(pending_since, created_at) < now() - make_interval(hours => coalesce($2::int, 0)) as expired
                from files where checksum = $1 for update
                """, [checksum, hours]).first
            else { return nil }
            // A new statement, so a photo committed while this one waited for the lock is seen.
            let referenced = try connection.query("select 1 from photos where checksum = $1 limit 1", [checksum]).count > 0
            if referenced { return nil }
            if hours != nil {
                guard try file.decode(Bool.self, "expired") else { return nil }
            } else if try file.decode(Bool.self, "pending") {
                return nil
            }
            let key = try file.decode(String.self, "key")
            try connection.query("delete from files where checksum = $1", [checksum])
            // Deleted under the row's lock: an upload waiting for it then finds no row and writes
            // the bytes again. Should the commit fail after this, the row names a missing blob,
            // which the next upload of those bytes also writes again.
            _ = try store.delete(BlobKey(key))
            return key
        }
        return key != nil
    }
}
