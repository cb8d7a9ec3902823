import Foundation
import Imaging
import Postgres

/// The `files` and `file_uploads` tables' statements (migrations/0020_file_uploads.sql): a stored
/// original shared by everyone who uploaded its bytes, each caller's upload of it (pending until a
/// photo of theirs attaches it), and the release of the original once nothing refers to its bytes.
/// Callers own the transactions and the row locks' order (see `TrashService.releaseFile`).
struct FileRepository: Sendable {
    /// An uploaded file's row as a photo create reads it when attaching it.
    struct AttachedFile: Sendable {
        var key: String
        var checksum: String
        var byteSize: Int64
        /// The original's media type (`image/jpeg`, `image/heic`, …), recognised from its bytes.
        var contentType: String
        /// The name the attaching caller uploaded it under.
        var originalFilename: String
        var width: Int
        var height: Int
        var orientation: Int
        var takenAt: Date?
        /// EXIF Make and Model of the original (migration 0027).
        var cameraMake: String?
        var cameraModel: String?
    }

    let pool: PostgresPool

    /// Records a stored original unless a row for the same name or bytes exists (`on conflict do
    /// nothing`: the name derives from the checksum, so either key may trip first).
    func insert(
        name: String, key: String, checksum: String, byteSize: Int, info: ImageInfo, on connection: PostgresConnection
    ) throws {
        try connection.query(
            """
            insert into files (name, key, checksum, byte_size, content_type, width, height, orientation, taken_at,
                               camera_make, camera_model)
            values ($1, $2, $3, $4, $9, $5, $6, $7, $8, $10, $11)
            on conflict do nothing
            """,
            [
                name, key, checksum, byteSize, info.displayWidth, info.displayHeight, info.orientation, info.takenAt,
                info.format.contentType, info.cameraMake, info.cameraModel,
            ])
    }

    /// Records `uploader`'s upload of the file named `name` (nil: the master key), pending from now
    /// under the name given, and locks the file's row first; false when there is no such file (a
    /// purge deleted it meanwhile). The row is found by its name, the key every upload of these bytes
    /// shares, and the upload recorded under the checksum that row holds.
    func recordUpload(name: String, uploader: String?, originalFilename: String, on connection: PostgresConnection)
        throws -> Bool
    {
        guard let row = try connection.query("select checksum from files where name = $1 for update", [name]).first
        else {
            return false
        }
        let checksum = try row.decode(String.self, "checksum")
        try connection.query(
            """
            insert into file_uploads (checksum, uploader_id, original_filename) values ($1, $2, $3)
            on conflict on constraint file_uploads_checksum_uploader_key
            do update set original_filename = excluded.original_filename, uploaded_at = clock_timestamp()
            """, [checksum, uploader, originalFilename])
        return true
    }

    /// Whether a file with these bytes is recorded.
    func exists(checksum: String) throws -> Bool {
        try pool.query("select 1 from files where checksum = $1", [checksum], retry: .safe).count > 0
    }

    /// Locks the file named `name` FOR UPDATE (the lock a release takes) and reads it; nil when
    /// there is none. Its `originalFilename` is the Parse name until `consumeUpload` says better.
    func lock(name: String, on connection: PostgresConnection) throws -> AttachedFile? {
        guard
            let file = try connection.query(
                """
                select key, checksum, byte_size, content_type, width, height, orientation, taken_at,
                       camera_make, camera_model
                from files where name = $1 for update
                """, [name]
            ).first
        else { return nil }
        return AttachedFile(
            key: try file.decode(String.self, "key"), checksum: try file.decode(String.self, "checksum"),
            byteSize: try file.decode(Int64.self, "byte_size"),
            contentType: try file.decode(String.self, "content_type"),
            originalFilename: name,
            width: try file.decode(Int.self, "width"), height: try file.decode(Int.self, "height"),
            orientation: try file.decode(Int.self, "orientation"), takenAt: try file.decode(Date?.self, "taken_at"),
            cameraMake: try file.decode(String?.self, "camera_make"),
            cameraModel: try file.decode(String?.self, "camera_model"))
    }

    /// Deletes `uploader`'s upload of these bytes (nil: the master key's), which a photo now
    /// attaches; the name it was uploaded under, nil when that caller has no such upload.
    func consumeUpload(checksum: String, uploader: String?, on connection: PostgresConnection) throws -> String? {
        try connection.query(
            """
            delete from file_uploads where checksum = $1 and uploader_id is not distinct from $2
            returning original_filename
            """, [checksum, uploader]
        ).first?.decode(String.self, "original_filename")
    }

    /// Locks the file with these bytes FOR UPDATE and reads its key; with `hours`, first deletes
    /// the uploads of it pending longer than that and says whether the file itself is older.
    /// `pending` tells whether any upload of it (left) waits to be attached. Nil when there is no such file.
    func lockForRelease(
        checksum: String, pendingOlderThanHours hours: Int?, on connection: PostgresConnection
    ) throws -> (key: String, pending: Bool, expired: Bool)? {
        guard
            let file = try connection.query(
                """
                select key, created_at < now() - make_interval(hours => coalesce($2::int, 0)) as expired
                from files where checksum = $1 for update
                """, [checksum, hours]
            ).first
        else { return nil }
        if hours != nil {
            try connection.query(
                "delete from file_uploads where checksum = $1 and uploaded_at < now() - make_interval(hours => $2::int)",
                [checksum, hours])
        }
        let pending =
            try connection.query("select 1 from file_uploads where checksum = $1 limit 1", [checksum], retry: .safe)
            .count > 0
        return (try file.decode(String.self, "key"), pending, try file.decode(Bool.self, "expired"))
    }

    /// The checksums of the files no photo refers to, recorded more than `hours` hours ago and
    /// without an upload within that time, in checksum order: the orphan collector's candidates,
    /// each checked again under its lock by `TrashService.releaseFile`.
    func unattachedChecksums(olderThanHours hours: Int) throws -> [String] {
        try pool.query(
            """
            select checksum from files f
            where f.created_at < now() - make_interval(hours => $1::int)
              and not exists (select 1 from file_uploads u
                              where u.checksum = f.checksum and u.uploaded_at >= now() - make_interval(hours => $1::int))
              and not exists (select 1 from photos p where p.checksum = f.checksum)
            order by checksum
            """, [hours], retry: .safe
        ).map { try $0.decode(String.self, "checksum") }
    }

    /// Deletes the row of the file with these bytes (and, by cascade, every upload of it).
    func delete(checksum: String, on connection: PostgresConnection) throws {
        try connection.query("delete from files where checksum = $1", [checksum])
    }
}
