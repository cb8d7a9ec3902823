import BlobStore
import Foundation
import Logging
import Postgres

/// The trash ("Recently Deleted") of photos and galleries: moving a row there (DELETE), and
/// removing trashed rows for good (an explicit purge, and when the retention period has passed).
/// Restoring is a PUT clearing `deletedAt` (the compiled update), or an upload of the same bytes
/// (`UploadService.createPhoto`). A photo's derivatives go with it; its original (and
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

    private var photos: PhotoRepository { PhotoRepository(pool: pool) }
    private var galleries: GalleryRepository { GalleryRepository(pool: pool) }

    /// Moves a live Photo or Gallery to the trash. One already there stays there (a retried DELETE
    /// is success). False when there is no such object; nil for a class without a trash.
    func moveToTrash(_ className: String, objectId: String) throws -> Bool? {
        switch className {
        case "Photo": return try photos.trash(objectId) || photos.exists(objectId)
        case "Gallery": return try galleries.trash(objectId) || galleries.exists(objectId)
        default: return nil
        }
    }

    /// Whether a Photo or Gallery exists, in the trash or not (false for other classes).
    func exists(_ className: String, objectId: String) throws -> Bool {
        switch className {
        case "Photo": return try photos.exists(objectId)
        case "Gallery": return try galleries.exists(objectId)
        default: return false
        }
    }

    /// Trashed photos deleted per transaction: short transactions, and a purge of a large trash
    /// never loads every id at once.
    static let purgeBatchSize = 500

    /// Deletes the trashed photos with these ids (live ones are left alone) and their blobs, in
    /// batches of `purgeBatchSize` per transaction. Returns the ids actually deleted.
    @discardableResult
    public func deletePhotos(_ objectIds: [String]) throws -> [String] {
        let ids = Set(objectIds).sorted()
        var deleted: [String] = []
        for start in stride(from: 0, to: ids.count, by: Self.purgeBatchSize) {
            let batch = Array(ids[start..<min(start + Self.purgeBatchSize, ids.count)])
            deleted += try releaseBlobs(of: photos.deleteTrashed(batch))
        }
        return deleted
    }

    /// Deletes every photo in the trash (`DELETE /purge/Photo`). Returns how many.
    @discardableResult
    public func deleteAllTrashedPhotos() throws -> Int {
        try deleteTrashedPhotos(olderThanDays: nil)
    }

    /// Purges photos and galleries trashed more than `days` days ago (the worker calls it with
    /// `trash_retention_days`). Returns how many of each. A purged gallery takes its items with it,
    /// never its photos; a purged photo leaves every gallery it was in with contiguous positions.
    public func purge(olderThanDays days: Int) throws -> (photos: Int, galleries: Int) {
        let photos = try deleteTrashedPhotos(olderThanDays: days)
        let galleries = try deleteTrashedGalleries(olderThanDays: days)
        if photos > 0 || galleries > 0 {
            logger.notice(
                "purged trash",
                metadata: ["photos": "\(photos)", "galleries": "\(galleries)", "retentionDays": "\(days)"])
        }
        return (photos, galleries)
    }

    /// Deletes the photos in the trash (with `days`, those trashed more than that many days ago)
    /// a page of `purgeBatchSize` ids at a time, each page in one transaction. Returns how many.
    private func deleteTrashedPhotos(olderThanDays days: Int?) throws -> Int {
        var count = 0
        var after: String?
        while true {
            let page = try photos.trashedIds(after: after, olderThanDays: days, limit: Self.purgeBatchSize)
            guard let last = page.last else { return count }
            // Checked again under the rows' locks: a photo restored meanwhile stays.
            count += try releaseBlobs(of: photos.deleteTrashed(page, olderThanDays: days)).count
            if page.count < Self.purgeBatchSize { return count }
            after = last
        }
    }

    /// Deletes galleries in Recently Deleted (all of them, or those trashed more than `days` days
    /// ago) with their items; their photos stay. Returns how many. The galleries are locked in
    /// objectId order first, the order a photo's trash trigger locks them in.
    @discardableResult
    public func deleteTrashedGalleries(olderThanDays days: Int? = nil) throws -> Int {
        try galleries.deleteTrashed(olderThanDays: days)
    }

    /// Deletes one gallery in Recently Deleted with its items (never its photos). Returns whether
    /// there was one: a live gallery is left alone.
    public func deleteTrashedGallery(_ objectId: String) throws -> Bool {
        try galleries.deleteTrashed(objectId)
    }

    /// Deletes the derivatives of deleted photo rows, and each original with its `files` row once
    /// no photo refers to its checksum and no upload of it waits to be attached.
    private func releaseBlobs(of rows: [PhotoRepository.Deleted]) throws -> [String] {
        var deleted: [String] = []
        var checksums: [String] = []
        for row in rows {
            deleted.append(row.objectId)
            checksums.append(row.checksum)
            for key in [row.thumbnailKey, row.previewKey] {
                if let key { _ = try? store.delete(BlobKey(key)) }
            }
            // Its display sizes (their `photo_sizes` rows went with the photo's).
            for size in DisplaySize.rendered {
                if let key = try? SizeService.renditionKey(objectId: row.objectId, size: size) {
                    _ = try? store.delete(key)
                }
            }
        }
        for checksum in Set(checksums).sorted() {
            try releaseFile(checksum: checksum, pendingOlderThanHours: nil)
        }
        return deleted
    }

    /// Deletes the `files` row for `checksum` and its original when no photo refers to those bytes
    /// and no upload of them waits to be attached (with `pendingOlderThanHours`, the orphan
    /// collector: uploads pending longer than that many hours are removed first, and a file recorded
    /// within that time stays). Returns whether it was released.
    ///
    /// The row is locked first and the blob deleted before the lock is released: an upload of the
    /// same bytes by anyone (`UploadService.storeFile`) and a photo create (`createPhoto`) take the
    /// same lock, so either they run first and record their upload or photo (and it stays), or they
    /// run after and find no row (the upload writes the bytes again). "The bytes are stored and
    /// referenced" holds at every commit, whoever the references belong to.
    @discardableResult
    func releaseFile(checksum: String, pendingOlderThanHours hours: Int?) throws -> Bool {
        let key: String? = try pool.transaction { connection -> String? in
            let files = FileRepository(pool: pool)
            guard let file = try files.lockForRelease(checksum: checksum, pendingOlderThanHours: hours, on: connection)
            else { return nil }
            // A new statement, so a photo committed while this one waited for the lock is seen.
            if try PhotoRepository(pool: pool).exists(checksum: checksum, on: connection) { return nil }
            guard !file.pending, file.expired else { return nil }
            let key = file.key
            try files.delete(checksum: checksum, on: connection)
            // Deleted under the row's lock: an upload waiting for it then finds no row and writes
            // the bytes again. Should the commit fail after this, the row names a missing blob,
            // which the next upload of those bytes also writes again.
            _ = try store.delete(BlobKey(key))
            return key
        }
        return key != nil
    }
}
