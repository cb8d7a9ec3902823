import Foundation
import Imaging
import Postgres

/// The `files` table's statements: an upload recorded (and marked pending until a photo
/// attaches it), attached to a photo, and released when nothing refers to its bytes. Callers own
/// the transactions and the row locks' order (see `TrashService.releaseFile`).
struct FileRepository: Sendable {
    /// An uploaded file's row as a photo create reads it when attaching it.
    struct AttachedFile: Sendable {
        var key: String
        var checksum: String
        var byteSize: Int64
        /// The original's media type (`image/jpeg`, `image/heic`, …), recognised from its bytes.
        var contentType: String
        var originalFilename: String
        var width: Int
        var height: Int
        var orientation: Int
        var takenAt: Date?
    }

    /// A file's row as a release reads it under its lock.
    struct LockedFile: Sendable {
        var key: String
        /// Waiting to be attached to a photo.
        var pending: Bool
        /// Pending or recorded longer ago than the release's grace period.
        var expired: Bool
    }

    let pool: PostgresPool

    /// Records an uploaded file, pending, unless a row for the same name or bytes exists
    /// (`on conflict do nothing`: the name derives from the checksum, so either key may trip first).
    func insertPending(
        name: String, key: String, checksum: String, byteSize: Int, originalFilename: String, info: ImageInfo,
        on connection: PostgresConnection
    ) throws {
        try connection.query(
            """
            insert into files (name, key, checksum, byte_size, content_type, original_filename,
                               width, height, orientation, taken_at, pending_since)
            values ($1, $2, $3, $4, $10, $5, $6, $7, $8, $9, clock_timestamp())
            on conflict do nothing
            """,
            [name, key, checksum, byteSize, originalFilename,
             info.displayWidth, info.displayHeight, info.orientation, info.takenAt, info.format.contentType])
    }

    /// Marks the file pending now and locks its row; false when there is no such row (a purge
    /// deleted it meanwhile).
    func markPending(name: String, on connection: PostgresConnection) throws -> Bool {
        try connection.query(
            "update files set pending_since = clock_timestamp() where name = $1 returning key", [name]
        ).count == 1
    }

    /// Whether a file with these bytes is recorded.
    func exists(checksum: String) throws -> Bool {
        try pool.query("select 1 from files where checksum = $1", [checksum]).count > 0
    }

    /// Clears the file's pending mark (a photo now refers to it), locking its row; nil when there is none.
    func attach(name: String, on connection: PostgresConnection) throws -> AttachedFile? {
        let files = try connection.query(
            """
            update files set pending_since = null where name = $1
            returning key, checksum, byte_size, content_type, original_filename, width, height, orientation, taken_at
            """, [name])
        guard let file = files.first else { return nil }
        return AttachedFile(
            key: try file.decode(String.self, "key"), checksum: try file.decode(String.self, "checksum"),
            byteSize: try file.decode(Int64.self, "byte_size"), contentType: try file.decode(String.self, "content_type"),
            originalFilename: try file.decode(String.self, "original_filename"),
            width: try file.decode(Int.self, "width"), height: try file.decode(Int.self, "height"),
            orientation: try file.decode(Int.self, "orientation"), takenAt: try file.decode(Date?.self, "taken_at"))
    }

    /// Locks the file with these bytes FOR UPDATE and reads it; `expired` compares its pending (or
    /// recorded) time with `hours` ago (0 when nil). Nil when there is no such file.
    func lockForRelease(checksum: String, pendingOlderThanHours hours: Int?, on connection: PostgresConnection) throws -> LockedFile? {
        guard let file = try connection.query(
            """
            select key, pending_since is not null as pending,
                   coalesce(pending_since, created_at) < now() - make_interval(hours => coalesce($2::int, 0)) as expired
            from files where checksum = $1 for update
            """, [checksum, hours]).first
        else { return nil }
        return LockedFile(
            key: try file.decode(String.self, "key"), pending: try file.decode(Bool.self, "pending"),
            expired: try file.decode(Bool.self, "expired"))
    }

    /// The checksums of the files no photo refers to, pending (or recorded, when never pending)
    /// for more than `hours` hours, in checksum order: the orphan collector's candidates, each
    /// checked again under its lock by `TrashService.releaseFile`.
    func unattachedChecksums(olderThanHours hours: Int) throws -> [String] {
        try pool.query(
            """
            select checksum from files f
            where coalesce(f.pending_since, f.created_at) < now() - make_interval(hours => $1::int)
              and not exists (select 1 from photos p where p.checksum = f.checksum)
            order by checksum
            """, [hours]
        ).map { try $0.decode(String.self, "checksum") }
    }

    /// Deletes the row of the file with these bytes.
    func delete(checksum: String, on connection: PostgresConnection) throws {
        try connection.query("delete from files where checksum = $1", [checksum])
    }
}
