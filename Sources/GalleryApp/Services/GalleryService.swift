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
/// Errors (`GalleryError`, mapped to Parse codes by `ParseErrorResponder`): a gallery or photo that
/// does not exist → `notFound` (101); a photo in Recently Deleted → `notFound` too (like an object
/// Parse cannot see, it may not be pointed to); any change to a gallery in Recently Deleted (items
/// added, moved or removed) → `galleryTrashed` (119) until it is restored.
struct GalleryService: Sendable {
    let pool: PostgresPool
    /// The statements this service runs.
    var galleries: GalleryRepository { GalleryRepository(pool: pool) }

    /// Creates a gallery; the name is already trimmed and validated.
    func createGallery(name: String, owner: String? = nil, acl: ParseACL? = nil) throws -> (String, Date) {
        let objectId = ParseObjectID.generate()
        return (objectId, try galleries.insertGallery(objectId: objectId, name: name, owner: owner, acl: acl))
    }

    /// Adds a photo to a gallery at `position` (nil or past the end: at the end), shifting later items.
    func addItem(gallery: String, photo: String, position: Int?, owner: String? = nil) throws -> (String, Date) {
        let galleries = self.galleries
        return try pool.transaction { connection in
            try lockLivePhoto(photo, on: connection)
            let count = try lockLiveGallery(gallery, on: connection)
            if try galleries.contains(gallery: gallery, photo: photo, on: connection) {
                throw GalleryError.alreadyInGallery("Photo \(photo) is already in gallery \(gallery).")
            }
            let target = min(max(0, position ?? count), count)
            try galleries.shiftDown(gallery: gallery, from: target, on: connection)
            let objectId = ParseObjectID.generate()
            let createdAt = try galleries.insertItem(
                objectId: objectId, gallery: gallery, photo: photo, position: target, owner: owner, on: connection)
            try galleries.touch(gallery, on: connection)
            return (objectId, createdAt)
        }
    }

    /// Moves an item to `position` (clamped to the last one); the items between shift by one.
    func moveItem(_ objectId: String, to position: Int) throws -> Date {
        let galleries = self.galleries
        return try pool.transaction { connection in
            let (gallery, _) = try item(objectId, on: connection)
            let count = try lockLiveGallery(gallery, on: connection)
            // Re-read under the gallery lock: a concurrent move may have changed it.
            guard let from = try galleries.position(ofItem: objectId, on: connection) else {
                throw GalleryError.notFound("Object not found.")
            }
            // Clamped: a drop past the last cell makes the item the last one.
            let target = min(max(0, position), max(0, count - 1))
            if target < from {
                try galleries.shiftDown(gallery: gallery, from: target, before: from, on: connection)
            } else if target > from {
                try galleries.shiftUp(gallery: gallery, after: from, through: target, on: connection)
            }
            let updatedAt = try galleries.setPosition(ofItem: objectId, to: target, on: connection)
            try galleries.touch(gallery, on: connection)
            return updatedAt
        }
    }

    /// The item's `updatedAt`, for a PUT that changes nothing; 101 when it does not exist.
    func itemUpdatedAt(_ objectId: String) throws -> Date {
        guard let updatedAt = try galleries.itemUpdatedAt(objectId) else {
            throw GalleryError.notFound("Object not found.")
        }
        return updatedAt
    }

    /// Removes an item and closes the gap behind it.
    func removeItem(_ objectId: String) throws {
        let galleries = self.galleries
        try pool.transaction { connection in
            let (gallery, photo) = try item(objectId, on: connection)
            // The photo before the gallery (see the lock order above); it may be trashed, not gone.
            _ = try galleries.lockPhotoForShare(photo, on: connection)
            _ = try lockLiveGallery(gallery, on: connection)
            guard let position = try galleries.deleteItem(objectId, on: connection) else {
                throw GalleryError.notFound("Object not found.")
            }
            try galleries.closeGap(gallery: gallery, at: position, on: connection)
            try galleries.touch(gallery, on: connection)
        }
    }

    /// The gallery and photo of an item, or 101.
    private func item(_ objectId: String, on connection: PostgresConnection) throws -> (gallery: String, photo: String)
    {
        guard let item = try galleries.item(objectId, on: connection) else {
            throw GalleryError.notFound("Object not found.")
        }
        return item
    }

    /// Locks a photo's row FOR SHARE for the rest of the transaction (it cannot be trashed or
    /// deleted until commit); 101 when it does not exist or is in Recently Deleted.
    private func lockLivePhoto(_ photo: String, on connection: PostgresConnection) throws {
        guard let deletedAt = try galleries.lockPhotoForShare(photo, on: connection) else {
            throw GalleryError.notFound("Photo \(photo) does not exist.")
        }
        if deletedAt != nil {
            throw GalleryError.notFound(
                "Photo \(photo) is in Recently Deleted; restore it before adding it to a gallery.")
        }
    }

    /// Locks a gallery's row for the rest of the transaction and returns its item count;
    /// 101 when it does not exist, 119 when it is in Recently Deleted.
    private func lockLiveGallery(_ gallery: String, on connection: PostgresConnection) throws -> Int {
        guard let deletedAt = try galleries.lockGalleryForUpdate(gallery, on: connection) else {
            throw GalleryError.notFound("Gallery \(gallery) does not exist.")
        }
        if deletedAt != nil {
            throw GalleryError.galleryTrashed("Gallery \(gallery) is in Recently Deleted; restore it first.")
        }
        return try galleries.itemCount(gallery, on: connection)
    }
}
