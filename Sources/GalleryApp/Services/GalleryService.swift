import Foundation
import Postgres

/// Galleries and their ordered items. Every item change locks its gallery's row first, so
/// concurrent inserts, moves and deletes in one gallery run one after another and positions
/// always stay the contiguous permutation 0…count−1 (the unique (gallery, position) constraint
/// is deferred to commit, so shifting a range never trips it half-way).
///
/// Positions count every item of the gallery, including those whose photo is in Recently Deleted
/// (hidden from queries, but keeping their place so a restore puts them back where they were). To
/// drop an item where another one is shown, a client sends that item's `position`.
///
/// Positions past the end are clamped: inserting at or past `count` appends, and moving to or past
/// `count − 1` makes the item the last one (a drop below the last cell of a collection view).
///
/// Lock order (shared with the triggers of migrations/0003_galleries.sql): the photo row (FOR
/// SHARE, so it cannot be trashed or deleted meanwhile) before the gallery row (FOR UPDATE).
/// Trashing or purging a photo locks the photo, then its galleries; one order, no deadlock.
///
/// Error codes: a gallery or photo that does not exist → 101; a photo in Recently Deleted → 101
/// too (like an object Parse cannot see, it may not be pointed to); any change to a gallery in
/// Recently Deleted (items added, moved or removed) → 119 until it is restored.
struct GalleryService: Sendable {
    let pool: PostgresPool

    /// Creates a gallery; the name is already trimmed and validated.
    func createGallery(name: String) throws -> (String, Date) {
        let objectId = ParseObjectID.generate()
        let row = try pool.query(
            "insert into galleries (object_id, name) values ($1, $2) returning created_at", [objectId, name])
        return (objectId, try row.first!.decode(Date.self, "created_at"))
    }

    /// Adds a photo to a gallery at `position` (nil or past the end: at the end), shifting later items.
    func addItem(gallery: String, photo: String, position: Int?) throws -> (String, Date) {
        try pool.transaction { connection in
            try lockLivePhoto(photo, on: connection)
            let count = try lockLiveGallery(gallery, on: connection)
            if try connection.query(
                "select 1 from gallery_items where gallery_id = $1 and photo_id = $2", [gallery, photo]).count > 0 {
                throw ParseError.duplicateValue("Photo \(photo) is already in gallery \(gallery).")
            }
            let target = min(max(0, position ?? count), count)
            try connection.query(
                "update gallery_items set position = position + 1 where gallery_id = $1 and position >= $2",
                [gallery, target])
            let objectId = ParseObjectID.generate()
            let row = try connection.query(
                """
                insert into gallery_items (object_id, gallery_id, photo_id, position)
                values ($1, $2, $3, $4) returning created_at
                """, [objectId, gallery, photo, target])
            try touch(gallery, on: connection)
            return (objectId, try row.first!.decode(Date.self, "created_at"))
        }
    }

    /// Moves an item to `position` (clamped to the last one); the items between shift by one.
    func moveItem(_ objectId: String, to position: Int) throws -> Date {
        try pool.transaction { connection in
            let (gallery, _) = try item(objectId, on: connection)
            let count = try lockLiveGallery(gallery, on: connection)
            // Re-read under the gallery lock: a concurrent move may have changed it.
            let current = try connection.query("select position from gallery_items where object_id = $1", [objectId])
            guard let row = current.first else { throw ParseError.objectNotFound() }
            let from = try row.decode(Int.self, "position")
            // Clamped: a drop past the last cell makes the item the last one.
            let target = min(max(0, position), max(0, count - 1))
            if target < from {
                try connection.query(
                    """
                    update gallery_items set position = position + 1
                    where gallery_id = $1 and position >= $2 and position < $3
                    """, [gallery, target, from])
            } else if target > from {
                try connection.query(
                    """
                    update gallery_items set position = position - 1
                    where gallery_id = $1 and position > $2 and position <= $3
                    """, [gallery, from, target])
            }
            let updated = try connection.query(
                """
                update gallery_items set position = $2, updated_at = date_trunc('milliseconds', now())
                where object_id = $1 returning updated_at
                """,
                [objectId, target])
            try touch(gallery, on: connection)
            return try updated.first!.decode(Date.self, "updated_at")
        }
    }

    /// The item's `updatedAt`, for a PUT that changes nothing; 101 when it does not exist.
    func itemUpdatedAt(_ objectId: String) throws -> Date {
        guard let row = try pool.query("select updated_at from gallery_items where object_id = $1", [objectId]).first else {
            throw ParseError.objectNotFound()
        }
        return try row.decode(Date.self, "updated_at")
    }

    /// Removes an item and closes the gap behind it.
    func removeItem(_ objectId: String) throws {
        try pool.transaction { connection in
            let (gallery, photo) = try item(objectId, on: connection)
            // The photo before the gallery (see the lock order above); it may be trashed, not gone.
            try connection.query("select 1 from photos where object_id = $1 for share", [photo])
            _ = try lockLiveGallery(gallery, on: connection)
            let deleted = try connection.query(
                "delete from gallery_items where object_id = $1 returning position", [objectId])
            guard let row = deleted.first else { throw ParseError.objectNotFound() }
            try connection.query(
                "update gallery_items set position = position - 1 where gallery_id = $1 and position > $2",
                [gallery, try row.decode(Int.self, "position")])
            try touch(gallery, on: connection)
        }
    }

    /// The gallery and photo of an item, or 101.
    private func item(_ objectId: String, on connection: PostgresConnection) throws -> (gallery: String, photo: String) {
        let rows = try connection.query("select gallery_id, photo_id from gallery_items where object_id = $1", [objectId])
        guard let row = rows.first else { throw ParseError.objectNotFound() }
        return (try row.decode(String.self, "gallery_id"), try row.decode(String.self, "photo_id"))
    }

    /// Locks a photo's row FOR SHARE for the rest of the transaction (it cannot be trashed or
    /// deleted until commit); 101 when it does not exist or is in Recently Deleted.
    private func lockLivePhoto(_ photo: String, on connection: PostgresConnection) throws {
        let rows = try connection.query("select deleted_at from photos where object_id = $1 for share", [photo])
        guard let row = rows.first else { throw ParseError.objectNotFound("Photo \(photo) does not exist.") }
        if try row.decode(Date?.self, "deleted_at") != nil {
            throw ParseError.objectNotFound("Photo \(photo) is in Recently Deleted; restore it before adding it to a gallery.")
        }
    }

    /// Locks a gallery's row for the rest of the transaction and returns its item count;
    /// 101 when it does not exist, 119 when it is in Recently Deleted.
    private func lockLiveGallery(_ gallery: String, on connection: PostgresConnection) throws -> Int {
        let rows = try connection.query(
            "select deleted_at from galleries where object_id = $1 for update", [gallery])
        guard let row = rows.first else { throw ParseError.objectNotFound("Gallery \(gallery) does not exist.") }
        if try row.decode(Date?.self, "deleted_at") != nil {
            throw ParseError.operationForbidden("Gallery \(gallery) is in Recently Deleted; restore it first.")
        }
        return try connection.query(
            "select count(*)::bigint as n from gallery_items where gallery_id = $1", [gallery]).first!.decode(Int.self, "n")
    }

    private func touch(_ gallery: String, on connection: PostgresConnection) throws {
        try connection.query("update galleries set updated_at = date_trunc('milliseconds', now()) where object_id = $1", [gallery])
    }
}
