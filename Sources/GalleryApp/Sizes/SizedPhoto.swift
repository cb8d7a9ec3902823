import Foundation

/// What the display sizes need to know of a photo: its id, its size as displayed, and the stored
/// files they are made from (the original for `o`, the thumbnail or preview for the others). The
/// Flickr API builds one from its own rows; the size routes read one from `photos`.
public struct SizedPhoto: Sendable {
    /// The photo's objectId.
    public var objectId: String
    /// Width as displayed (EXIF orientation applied), the record's `width`.
    public var width: Int
    /// Height as displayed, the record's `height`.
    public var height: Int
    /// Blob key of the original (`original_key`).
    public var originalKey: String
    /// Blob key of the preview (longest edge 2048), nil until the photo is processed.
    public var previewKey: String?
    /// The preview's width and height, nil until processed.
    public var previewSize: (width: Int, height: Int)?
    /// Blob key of the thumbnail (shorter edge 400), nil until processed.
    public var thumbnailKey: String?
    /// The thumbnail's width and height, nil until processed.
    public var thumbnailSize: (width: Int, height: Int)?

    /// A photo as the sizes see it.
    public init(
        objectId: String, width: Int, height: Int, originalKey: String, previewKey: String?,
        previewSize: (width: Int, height: Int)?, thumbnailKey: String? = nil,
        thumbnailSize: (width: Int, height: Int)? = nil
    ) {
        self.objectId = objectId
        self.width = width
        self.height = height
        self.originalKey = originalKey
        self.previewKey = previewKey
        self.previewSize = previewSize
        self.thumbnailKey = thumbnailKey
        self.thumbnailSize = thumbnailSize
    }
}
