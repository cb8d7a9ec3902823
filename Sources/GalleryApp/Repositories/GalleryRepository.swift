import Foundation
import Postgres

/// The `galleries` and `gallery_items` statements of `GalleryService`. It decides nothing: the
/// service owns the transactions, the lock order and the errors; each statement that must run
/// inside the service's transaction takes its connection.
struct GalleryRepository: Sendable {
    let pool: PostgresPool

    /// Inserts a gallery and returns its `createdAt`.
    func insertGallery(objectId: String, name: String, owner: String?, acl: ParseACL?) throws -> Date {
        let row = try pool.query(
            "insert into galleries (object_id, name, owner_id, acl) values ($1, $2, $3, $4::jsonb) returning created_at",
            [objectId, name, owner, acl?.json])
        return try row.first!.decode(Date.self, "created_at")
    }

    /// Locks a photo's row FOR SHARE; nil when it does not exist, else its `deleted_at` (nil when live).
    func lockPhotoForShare(_ photo: String, on connection: PostgresConnection) throws -> Date?? {
        let rows = try connection.query("select deleted_at from photos where object_id = $1 for share", [photo])
        guard let row = rows.first else { return nil }
        return .some(try row.decode(Date?.self, "deleted_at"))
    }

    /// Locks a gallery's row FOR UPDATE; nil when it does not exist, else its `deleted_at` (nil when live).
    func lockGalleryForUpdate(_ gallery: String, on connection: PostgresConnection) throws -> Date?? {
        let rows = try connection.query("select deleted_at from galleries where object_id = $1 for update", [gallery])
        guard let row = rows.first else { return nil }
        return .some(try row.decode(Date?.self, "deleted_at"))
    }

    /// How many items a gallery has, trashed photos' items included.
    func itemCount(_ gallery: String, on connection: PostgresConnection) throws -> Int {
        try connection.query(
            "select count(*)::bigint as n from gallery_items where gallery_id = $1", [gallery], retry: .safe
        ).first!.decode(Int.self, "n")
    }

    /// Whether the photo is already an item of the gallery.
    func contains(gallery: String, photo: String, on connection: PostgresConnection) throws -> Bool {
        try connection.query(
            "select 1 from gallery_items where gallery_id = $1 and photo_id = $2", [gallery, photo], retry: .safe
        ).count > 0
    }

    /// Shifts the items at `position` and after one place down, making room for an insert.
    func shiftDown(gallery: String, from position: Int, on connection: PostgresConnection) throws {
        try connection.query(
            "update gallery_items set position = position + 1 where gallery_id = $1 and position >= $2",
            [gallery, position])
    }

    /// Inserts an item and returns its `createdAt`.
    func insertItem(
        objectId: String, gallery: String, photo: String, position: Int, owner: String?,
        on connection: PostgresConnection
    ) throws -> Date {
        let row = try connection.query(
            """
            insert into gallery_items (object_id, gallery_id, photo_id, position, owner_id)
            values ($1, $2, $3, $4, $5) returning created_at
            """, [objectId, gallery, photo, position, owner])
        return try row.first!.decode(Date.self, "created_at")
    }

    /// An item's position, or nil when it does not exist.
    func position(ofItem objectId: String, on connection: PostgresConnection) throws -> Int? {
        let rows = try connection.query(
            "select position from gallery_items where object_id = $1", [objectId], retry: .safe)
        return try rows.first.map { try $0.decode(Int.self, "position") }
    }

    /// Moves the items in `target..<from` one place down (an item moves up to `target`).
    func shiftDown(gallery: String, from target: Int, before from: Int, on connection: PostgresConnection) throws {
        try connection.query(
            """
            update gallery_items set position = position + 1
            where gallery_id = $1 and position >= $2 and position < $3
            """, [gallery, target, from])
    }

    /// Moves the items in `from+1...target` one place up (an item moves down to `target`).
    func shiftUp(gallery: String, after from: Int, through target: Int, on connection: PostgresConnection) throws {
        try connection.query(
            """
            update gallery_items set position = position - 1
            where gallery_id = $1 and position > $2 and position <= $3
            """, [gallery, from, target])
    }

    /// Sets an item's position and returns its new `updatedAt`.
    func setPosition(ofItem objectId: String, to position: Int, on connection: PostgresConnection) throws -> Date {
        let updated = try connection.query(
            """
            update gallery_items set position = $2, updated_at = date_trunc('milliseconds', now())
            where object_id = $1 returning updated_at
            """,
            [objectId, position])
        return try updated.first!.decode(Date.self, "updated_at")
    }

    /// An item's `updatedAt`, or nil when it does not exist.
    func itemUpdatedAt(_ objectId: String) throws -> Date? {
        try pool.query("select updated_at from gallery_items where object_id = $1", [objectId], retry: .safe).first
            .map { try $0.decode(Date.self, "updated_at") }
    }

    /// Deletes an item and returns the position it had, or nil when it did not exist.
    func deleteItem(_ objectId: String, on connection: PostgresConnection) throws -> Int? {
        let deleted = try connection.query(
            "delete from gallery_items where object_id = $1 returning position", [objectId])
        return try deleted.first.map { try $0.decode(Int.self, "position") }
    }

    /// Closes the gap an item at `position` left: the items after it move one place up.
    func closeGap(gallery: String, at position: Int, on connection: PostgresConnection) throws {
        try connection.query(
            "update gallery_items set position = position - 1 where gallery_id = $1 and position > $2",
            [gallery, position])
    }

    /// An item's gallery and photo, or nil when it does not exist.
    func item(_ objectId: String, on connection: PostgresConnection) throws -> (gallery: String, photo: String)? {
        let rows = try connection.query(
            "select gallery_id, photo_id from gallery_items where object_id = $1", [objectId], retry: .safe)
        guard let row = rows.first else { return nil }
        return (try row.decode(String.self, "gallery_id"), try row.decode(String.self, "photo_id"))
    }

    /// Sets a gallery's `updatedAt` to now (its items changed).
    func touch(_ gallery: String, on connection: PostgresConnection) throws {
        try connection.query(
            "update galleries set updated_at = date_trunc('milliseconds', now()) where object_id = $1", [gallery])
    }
}

extension GalleryRepository {
    /// Moves a live gallery to the trash; false when there is none (trashed already, or never was).
    func trash(_ objectId: String) throws -> Bool {
        try pool.query(
            "update galleries set deleted_at = date_trunc('milliseconds', now()) where object_id = $1 and deleted_at is null returning object_id",
            [objectId]
        ).count > 0
    }

    /// Whether the gallery exists, trashed or not.
    func exists(_ objectId: String) throws -> Bool {
        try pool.query("select 1 from galleries where object_id = $1", [objectId], retry: .safe).count == 1
    }

    /// Deletes galleries in the trash (all, or those trashed more than `days` days ago) with their
    /// items, locking them in objectId order first. Returns how many.
    func deleteTrashed(olderThanDays days: Int?) throws -> Int {
        try pool.query(
            """
            delete from galleries where object_id in (
                select object_id from galleries
                where deleted_at is not null and ($1::int is null or deleted_at < now() - make_interval(days => $1::int))
                order by object_id for update)
            """, [days]
        ).affectedRows
    }

    /// Deletes one gallery if it is in the trash; false when it was not (live, or none).
    func deleteTrashed(_ objectId: String) throws -> Bool {
        try pool.query("delete from galleries where object_id = $1 and deleted_at is not null", [objectId]).affectedRows
            == 1
    }
}
