import BlobStore
import Foundation
import HTTPServer
import Postgres

/// Deleting: a DELETE moves a Photo or Gallery to Recently Deleted (idempotently) and removes a
/// GalleryItem; a purge deletes what is in Recently Deleted for good.
extension ParseAPI {
    /// `DELETE /classes/<Class>/<objectId>`: a Photo or Gallery moves to Recently Deleted, and one
    /// already there stays there (`{}` again): DELETE is idempotent (RFC 9110 §9.2.2), so a client
    /// or proxy re-sending it after a dropped connection never destroys anything. Deleting for good
    /// is `DELETE /purge/<Class>/<objectId>` (`purge(_:objectId:)`). A GalleryItem is removed and
    /// the gap closed. `{}`.
    func delete(_ className: String, objectId: String, access: ParseAccess = .master) throws -> Result {
        defer { classChanges?.refreshAfterWrite() }
        guard let schema = ParseClassSchema.named(className) else {
            return try deleteCustom(className, objectId: objectId, access: access)
        }
        try requireBuiltIn(.delete, className, access)
        let objectId = try Self.checkedObjectId(objectId)
        // Trashing is the owner's; removing an item its gallery's editors'.
        try require(schema.className == "GalleryItem" ? .edit : .own, schema, objectId, access)
        switch schema.className {
        case "Photo", "Gallery":
            // Already in Recently Deleted (a retried DELETE) is success; never there is 101.
            guard try trash.moveToTrash(schema.className, objectId: objectId) == true else {
                throw ParseError.objectNotFound()
            }
        case "GalleryItem":
            try galleries.removeItem(objectId)
        default:
            throw ParseError.operationForbidden("\(schema.className) objects cannot be deleted.")
        }
        return Result(status: .ok, json: Array("{}".utf8))
    }

    /// `DELETE /purge/<Class>/<objectId>`: deletes one Photo or Gallery in Recently Deleted for good
    /// (a photo's blobs once unreferenced; a gallery's items, never its photos). `{}`. A live object
    /// is 119 (trash it first), one that does not exist (or was purged already) 101.
    func purge(_ className: String, objectId: String, access: ParseAccess = .master) throws -> Result {
        defer { classChanges?.refreshAfterWrite() }
        let schema = try Self.schema(className)
        let objectId = try Self.checkedObjectId(objectId)
        guard schema.hasTrash else {
            throw ParseError.operationForbidden("\(schema.className) has no Recently Deleted.")
        }
        try require(.own, schema, objectId, access)
        let purged: Bool
        switch schema.className {
        case "Photo":
            purged = !(try trash.deletePhotos([objectId])).isEmpty
        case "Gallery":
            purged = try trash.deleteTrashedGallery(objectId)
        default:
            throw ParseError.operationForbidden("\(schema.className) has no Recently Deleted.")
        }
        if !purged {
            guard try trash.exists(schema.className, objectId: objectId) else {
                throw ParseError.objectNotFound()
            }
            throw ParseError.operationForbidden(
                "\(schema.className) \(objectId) is not in Recently Deleted; DELETE /classes/\(schema.className)/\(objectId) first."
            )
        }
        return Result(status: .ok, json: Array("{}".utf8))
    }

    /// `DELETE /purge/<Class>` (master key): empties Recently Deleted for the class now.
    func purgeTrash(_ className: String) throws -> Result {
        defer { classChanges?.refreshAfterWrite() }
        let schema = try Self.schema(className)
        switch schema.className {
        case "Photo":
            try trash.deleteAllTrashedPhotos()
        case "Gallery":
            try trash.deleteTrashedGalleries()
        default:
            throw ParseError.operationForbidden("\(schema.className) has no Recently Deleted.")
        }
        return Result(status: .ok, json: Array("{}".utf8))
    }
}
