import Foundation
import Postgres

/// The statements of the display sizes: the photo a size is made from, and the `photo_sizes`
/// table (migration 0023) that lists rendered sizes for the bounded cache.
struct SizeRepository: Sendable {
    let pool: PostgresPool

    /// A rendered size as the cache lists it.
    struct Entry: Sendable {
        var photoId: String
        var size: String
        var blobKey: String
        var bytes: Int64
    }

    /// The photo `objectId` as the sizes see it (trashed ones too, as the bucket serves their
    /// derivatives), or nil when there is no such photo.
    func photo(_ objectId: String) throws -> SizedPhoto? {
        let rows = try pool.query(
            """
            select object_id, width, height, original_key, preview_key, preview_width, preview_height,
                   thumbnail_key, thumbnail_width, thumbnail_height
            from photos where object_id = $1
            """, [objectId], retry: .safe)
        return try rows.first.map { row in
            let previewWidth = try row.decode(Int?.self, "preview_width")
            let previewHeight = try row.decode(Int?.self, "preview_height")
            let thumbWidth = try row.decode(Int?.self, "thumbnail_width")
            let thumbHeight = try row.decode(Int?.self, "thumbnail_height")
            return SizedPhoto(
                objectId: try row.decode(String.self, "object_id"), width: try row.decode(Int.self, "width"),
                height: try row.decode(Int.self, "height"), originalKey: try row.decode(String.self, "original_key"),
                previewKey: try row.decode(String?.self, "preview_key"),
                previewSize: previewWidth.flatMap { w in previewHeight.map { (w, $0) } },
                thumbnailKey: try row.decode(String?.self, "thumbnail_key"),
                thumbnailSize: thumbWidth.flatMap { w in thumbHeight.map { (w, $0) } })
        }
    }

    /// Runs `body` holding rendition `blobKey`'s lock, shared by every instance on the database
    /// (`pg_advisory_xact_lock` on two `hashtext`s: galleryd's sizes and the key), in a transaction
    /// that `body`'s statements on this pool join (`sharingTransaction`): a second instance asking
    /// for the same cold size waits here, then finds the first one's file. Holds one connection
    /// while `body` renders (tens of milliseconds).
    func whileHoldingRenderLock<T>(_ blobKey: String, _ body: () throws -> T) throws -> T {
        try pool.sharingTransaction {
            try pool.query("select pg_advisory_xact_lock(hashtext('galleryd-sizes'), hashtext($1))", [blobKey])
            return try body()
        }
    }

    /// Lists a rendered size (or updates its byte count after a re-render); false when the photo
    /// is gone (purged while it rendered), so the caller deletes the blob it wrote.
    func record(_ entry: Entry) throws -> Bool {
        let result = try pool.query(
            """
            insert into photo_sizes (photo_id, size, blob_key, bytes)
            select $1, $2, $3, $4 where exists (select 1 from photos where object_id = $1)
            on conflict (photo_id, size) do update
                set bytes = excluded.bytes, blob_key = excluded.blob_key, last_used_at = clock_timestamp()
            """, [entry.photoId, entry.size, entry.blobKey, entry.bytes])
        return result.affectedRows == 1
    }

    /// Moves the listed blob keys to the front of the LRU order.
    func touch(_ blobKeys: [String]) throws {
        guard !blobKeys.isEmpty else { return }
        try pool.query(
            "update photo_sizes set last_used_at = clock_timestamp() where blob_key = any($1::text[])", [blobKeys])
    }

    /// Bytes of every rendered size.
    func totalBytes() throws -> Int64 {
        let rows = try pool.query("select coalesce(sum(bytes), 0)::bigint as total from photo_sizes", retry: .safe)
        return try rows.first.map { try $0.decode(Int64.self, "total") } ?? 0
    }

    /// Unlists least recently used sizes until at most `limit` bytes stay listed, never `kept`
    /// (the rendition just made), and returns the unlisted ones (their blobs are the caller's to
    /// delete). One statement: the running total in LRU order decides, and concurrent callers
    /// each take distinct rows (`for update skip locked`).
    func evict(toAtMost limit: Int64, keeping kept: String) throws -> [Entry] {
        try pool.query(
            """
            with ordered as (
                select photo_id, size, sum(bytes) over (order by last_used_at desc, blob_key) as kept
                from photo_sizes
            ), victims as (
                select s.photo_id, s.size from photo_sizes s
                join ordered o using (photo_id, size)
                where o.kept > $1 and s.blob_key <> $2
                for update of s skip locked
            )
            delete from photo_sizes s using victims v
            where s.photo_id = v.photo_id and s.size = v.size
            returning s.photo_id, s.size, s.blob_key, s.bytes
            """, [limit, kept]
        ).map(Self.entry)
    }

    /// Unlists every size of a photo and returns them (re-processing replaces its pixels).
    func remove(photoId: String) throws -> [Entry] {
        try pool.query(
            "delete from photo_sizes where photo_id = $1 returning photo_id, size, blob_key, bytes", [photoId]
        ).map(Self.entry)
    }

    private static func entry(_ row: PostgresRow) throws -> Entry {
        Entry(
            photoId: try row.decode(String.self, "photo_id"), size: try row.decode(String.self, "size"),
            blobKey: try row.decode(String.self, "blob_key"), bytes: try row.decode(Int64.self, "bytes"))
    }
}
