import Foundation
import Postgres

/// Galleries and their ordered items. Every item change locks its gallery's row first, so
/// concurrent inserts, moves and deletes in one gallery run one after another and positions
/// always stay the contiguous permutation 0…count−1 (the unique (gallery, position) constraint
/// is deferred to commit, so shifting a range never trips it half-way).
///
/// Positions past the end are clamped to the end (a drop below the last cell appends), as a
/// collection view does.
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
            let count = try lockLiveGallery(gallery, on: connection)
            let photos = try connection.query("select deleted_at from photos where object_id = $1", [photo])
            guard let photoRow = photos.first else { throw ParseError.objectNotFound("Photo \(photo) does not exist.") }
            if try photoRow.decode(Date?.self, "deleted_at") != nil {
                throw ParseError.operationForbidden("Photo \(photo) is in Recently Deleted; restore it first.")
            }
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
            let (gallery, _) = try itemGallery(objectId, on: connection)
            let count = try lockLiveGallery(gallery, on: connection)
            // Re-read under the gallery lock: a concurrent move may have changed it.
            let current = try connection.query("select position from gallery_items where object_id = $1", [objectId])
            guard let row = current.first else { throw ParseError.objectNotFound() }
            let from = try row.decode(Int.self, "position")
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
                "update gallery_items set position = $2, updated_at = now() where object_id = $1 returning updated_at",
                [objectId, target])
            try touch(gallery, on: connection)
            return try updated.first!.decode(Date.self, "updated_at")
        }
    }

    /// Removes an item and closes the gap behind it.
    func removeItem(_ objectId: String) throws {
        try pool.transaction { connection in
            let (gallery, _) = try itemGallery(objectId, on: connection)
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

    /// The gallery an item belongs to, and its position, or 101.
    private func itemGallery(_ objectId: String, on connection: PostgresConnection) throws -> (String, Int) {
        let rows = try connection.query("select gallery_id, position from gallery_items where object_id = $1", [objectId])
        guard let row = rows.first else { throw ParseError.objectNotFound() }
        return (try row.decode(String.self, "gallery_id"), try row.decode(Int.self, "position"))
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
        try connection.query("update galleries set updated_at = now() where object_id = $1", [gallery])
    }
}
