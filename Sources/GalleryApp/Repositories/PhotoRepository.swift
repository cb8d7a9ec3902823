import BlobStore
import Foundation
import Imaging
import Postgres

/// The `photos` table's statements for the job worker and queue: where an original is, the
/// `processing` mark, the derivatives a finished job records, and the `failed` mark and its reset.
/// Callers decide the transactions; the statements that must run inside one take its connection.
struct PhotoRepository: Sendable {
    let pool: PostgresPool

    /// The blob key of a photo's original, or nil when the photo no longer exists.
    func originalKey(of photoId: String) throws -> String? {
        let rows = try pool.query("select original_key from photos where object_id = $1", [photoId], retry: .safe)
        return try rows.first.map { try $0.decode(String.self, "original_key") }
    }

    /// Marks a pending or failed photo as being processed (a ready one stays ready).
    func markProcessing(_ photoId: String) throws {
        try pool.query(
            "update photos set status = 'processing' where object_id = $1 and status in ('pending', 'failed')",
            [photoId])
    }

    /// Records a processed image's derivatives and marks the photo ready, in the caller's
    /// transaction. False when the photo is gone (purged while it was processed).
    func recordDerivatives(
        _ photoId: String, image: ProcessedImage, thumbnailKey: BlobKey, previewKey: BlobKey,
        on connection: PostgresConnection
    ) throws -> Bool {
        let updated = try connection.query(
            """
            update photos set status = 'ready', error = null,
                   thumbnail_key = $2, thumbnail_width = $3, thumbnail_height = $4,
                   preview_key = $5, preview_width = $6, preview_height = $7,
                   dominant_color = $8, width = $9, height = $10, aspect_ratio = $11, thumbhash = $12
            where object_id = $1
            """,
            [
                photoId, thumbnailKey.rawValue, image.thumbnail.width, image.thumbnail.height,
                previewKey.rawValue, image.preview.width, image.preview.height, image.dominantColor,
                image.info.displayWidth, image.info.displayHeight,
                Double(image.info.displayWidth) / Double(max(1, image.info.displayHeight)),
                image.thumbHash.isEmpty ? nil : Data(image.thumbHash).base64EncodedString(),
            ])
        return updated.affectedRows == 1
    }

    /// Marks photos failed, each with its reason, in the caller's transaction (their jobs failed
    /// for good). Returns how many photos changed.
    @discardableResult
    func markFailed(_ failures: [(photoId: String, reason: String)], on connection: PostgresConnection) throws -> Int {
        guard !failures.isEmpty else { return 0 }
        return try connection.query(
            """
            update photos set status = 'failed', error = failed.reason
            from unnest($1::text[], $2::text[]) as failed(object_id, reason)
            where photos.object_id = failed.object_id
            """, [failures.map { $0.photoId }, failures.map { $0.reason }]
        ).affectedRows
    }

    /// Puts failed photos back to `pending` without their error, in the caller's transaction: those
    /// of `photoIds` that are failed, or every failed photo when it is nil. Returns their ids.
    func resetFailed(_ photoIds: [String]?, on connection: PostgresConnection) throws -> [String] {
        try connection.query(
            """
            update photos set status = 'pending', error = null
            where status = 'failed' and ($1::text[] is null or object_id = any($1::text[]))
            returning object_id
            """, [photoIds]
        ).map { try $0.decode(String.self, "object_id") }
    }
}

extension PhotoRepository {
    /// The photo restored from the trash by `restore(checksum:on:)`.
    struct Restored: Sendable {
        var objectId: String
        var createdAt: Date
        /// It had failed; it is pending again and needs its job re-queued.
        var wasFailed: Bool
    }

    /// Inserts a pending photo of `owner` (nil: ownerless) for an attached file; nil when the owner
    /// has a photo of the same bytes (`on conflict (owner_id, checksum) do nothing`: a concurrent
    /// create waits for the other insert). Returns the objectId and `createdAt`.
    func insertPending(
        objectId: String, title: String, tags: [String], file: FileRepository.AttachedFile, owner: String?,
        on connection: PostgresConnection
    ) throws -> (objectId: String, createdAt: Date)? {
        let inserted = try connection.query(
            """
            insert into photos (object_id, filename, title, tags, content_type, byte_size, checksum,
                                width, height, aspect_ratio, orientation, taken_at, original_key, status, owner_id,
                                camera_make, camera_model)
            values ($1, $2, $3, $4, $14, $5, $6, $7, $8, $9, $10, $11, $12, 'pending', $13, $15, $16)
            on conflict (owner_id, checksum) do nothing
            returning object_id, created_at
            """,
            [
                objectId, file.originalFilename, title, tags, file.byteSize, file.checksum, file.width, file.height,
                file.height > 0 ? Double(file.width) / Double(file.height) : 1.0, file.orientation,
                file.takenAt, file.key, owner, file.contentType, file.cameraMake, file.cameraModel,
            ])
        guard let row = inserted.first else { return nil }
        return (try row.decode(String.self, "object_id"), try row.decode(Date.self, "created_at"))
    }

    /// Takes the owner's photo of these bytes out of the trash, a failed one back to pending; nil when none.
    func restore(checksum: String, owner: String?, on connection: PostgresConnection) throws -> Restored? {
        let existing = try connection.query(
            """
            update photos set deleted_at = null,
                   status = case when status = 'failed' then 'pending' else status end,
                   error = case when status = 'failed' then null else error end
            where checksum = $1 and owner_id is not distinct from $2
            returning object_id, created_at,
                      (select p.status from photos p where p.checksum = $1 and p.owner_id is not distinct from $2) as old_status
            """, [checksum, owner])
        guard let row = existing.first else { return nil }
        return Restored(
            objectId: try row.decode(String.self, "object_id"), createdAt: try row.decode(Date.self, "created_at"),
            wasFailed: try row.decode(String.self, "old_status") == "failed")
    }

    /// Whether `owner` (nil: ownerless) has a photo of these bytes, trashed or not.
    func exists(checksum: String, owner: String?, on connection: PostgresConnection) throws -> Bool {
        try connection.query(
            "select 1 from photos where checksum = $1 and owner_id is not distinct from $2", [checksum, owner],
            retry: .safe
        ).count > 0
    }

    /// Whether any photo (trashed ones too) refers to these bytes.
    func exists(checksum: String, on connection: PostgresConnection) throws -> Bool {
        try connection.query("select 1 from photos where checksum = $1 limit 1", [checksum], retry: .safe).count > 0
    }
}

extension PhotoRepository {
    /// A photo row a purge deleted: what its blobs are.
    struct Deleted: Sendable {
        var objectId: String
        var checksum: String
        var thumbnailKey: String?
        var previewKey: String?
    }

    /// Moves a live photo to the trash; false when there is none (trashed already, or never was).
    func trash(_ objectId: String) throws -> Bool {
        try pool.query(
            "update photos set deleted_at = date_trunc('milliseconds', now()) where object_id = $1 and deleted_at is null returning object_id",
            [objectId]
        ).count > 0
    }

    /// Whether the photo exists, trashed or not.
    func exists(_ objectId: String) throws -> Bool {
        try pool.query("select 1 from photos where object_id = $1", [objectId], retry: .safe).count == 1
    }

    /// Which of `objectIds` are photos (trashed or not).
    func existingIds(among objectIds: [String]) throws -> Set<String> {
        Set(
            try pool.query("select object_id from photos where object_id = any($1)", [objectIds], retry: .safe)
                .map { try $0.decode(String.self, "object_id") })
    }

    /// Up to `limit` ids of photos in the trash (with `days`, trashed more than that many days
    /// ago) after `after`, in objectId order: one page of a purge.
    func trashedIds(after: String?, olderThanDays days: Int?, limit: Int) throws -> [String] {
        try pool.query(
            """
            select object_id from photos
            where deleted_at is not null and ($1::int is null or deleted_at < now() - make_interval(days => $1::int))
              and ($2::text is null or object_id > $2)
            order by object_id limit $3
            """, [days, after, limit], retry: .safe
        ).map { try $0.decode(String.self, "object_id") }
    }

    /// Deletes those of `objectIds` that are in the trash (with `days`, trashed more than that many
    /// days ago), in one transaction; the rows deleted. Photos that were restored meanwhile stay.
    ///
    /// Locks in the order every other writer takes them, so a batch never deadlocks with a trash,
    /// a restore or an item added: the photos first, in objectId order, then the galleries holding
    /// them, in objectId order (migrations/0003's delete trigger then finds its galleries locked).
    func deleteTrashed(_ objectIds: [String], olderThanDays days: Int? = nil) throws -> [Deleted] {
        guard !objectIds.isEmpty else { return [] }
        return try pool.transaction { connection -> [Deleted] in
            let locked = try connection.query(
                """
                select object_id from photos
                where object_id = any($1)
                  and deleted_at is not null and ($2::int is null or deleted_at < now() - make_interval(days => $2::int))
                order by object_id for update
                """, [objectIds, days]
            ).map { try $0.decode(String.self, "object_id") }
            guard !locked.isEmpty else { return [] }
            try connection.query(
                """
                select 1 from galleries
                where object_id in (select gallery_id from gallery_items where photo_id = any($1))
                order by object_id for update
                """, [locked])
            return try connection.query(
                """
                delete from photos where object_id = any($1)
                returning object_id, checksum, thumbnail_key, preview_key
                """, [locked]
            ).map { row in
                Deleted(
                    objectId: try row.decode(String.self, "object_id"),
                    checksum: try row.decode(String.self, "checksum"),
                    thumbnailKey: try row.decode(String?.self, "thumbnail_key"),
                    previewKey: try row.decode(String?.self, "preview_key"))
            }
        }
    }
}

extension PhotoRepository {
    /// Of these photos, how many are still pending or processing and how many failed.
    func processingCounts(_ objectIds: [String]) throws -> (waiting: Int, failed: Int)? {
        guard
            let row = try pool.query(
                """
                select count(*) filter (where status in ('pending', 'processing'))::bigint as waiting,
                       count(*) filter (where status = 'failed')::bigint as failed
                from photos where object_id = any($1)
                """, [objectIds], retry: .safe
            ).first
        else { return nil }
        return (try row.decode(Int.self, "waiting"), try row.decode(Int.self, "failed"))
    }
}
