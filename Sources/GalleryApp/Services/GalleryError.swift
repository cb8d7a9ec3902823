/// What a service refuses, in the domain's words (photos, galleries, files), never the wire's:
/// `ParseErrorResponder.parseError(for:)` is the one place that turns each case into a Parse code
/// and an HTTP status. Each message is a sentence for the client.
public enum GalleryError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A photo, gallery or item that does not exist, or may not be pointed to (in the trash).
    case notFound(String)
    /// The photo is already an item of that gallery.
    case alreadyInGallery(String)
    /// The gallery is in Recently Deleted: its items may not change until it is restored.
    case galleryTrashed(String)
    /// An upload that is not a storable image: empty, not a JPEG, truncated, over the pixel limit.
    case unstorableImage(String)
    /// A photo names a file that was never uploaded (or was released).
    case unknownFile(String)
    /// A concurrent change won a race the service could not settle itself; the client retries.
    case conflict(String)

    /// The client-facing sentence.
    public var message: String {
        switch self {
        case .notFound(let message), .alreadyInGallery(let message), .galleryTrashed(let message),
            .unstorableImage(let message), .unknownFile(let message), .conflict(let message):
            return message
        }
    }

    public var description: String { "GalleryError: \(message)" }
}
