import BlobStore
import Foundation
import Imaging
import Logging

/// The display sizes of photos (`DisplaySize`, Flickr's ladder): where each one is, its signed
/// URL and pixel size, and its file, rendered on first request.
///
/// **Entry points** (for the Flickr API and the manifest):
/// - `rendition(photo:size:encoder:)` → the signed asset URL, width and height of one size, without
///   rendering anything: cheap enough for every photo of a page. The URL is a bucket URL
///   (`/<bucket>/s/<expires>/<sig>/sizes/<objectId>/<size>.jpg`, or the preview's or original's own
///   key when the size is exactly that file); the first GET of it renders the file.
/// - `file(photo:size:)` → the blob key holding the size, rendered now if it is not stored yet.
///   Blocks (decode, encode, store writes): call it from a route that may block, never from an
///   event loop. Any number of concurrent callers for one photo and size share one render, in
///   this process (`SingleFlight`) and across the instances on one database (a PostgreSQL
///   advisory lock per rendition, `SizeRepository.whileHoldingRenderLock`).
///
/// Sizes up to `k` are made from the smallest stored derivative large enough, the thumbnail when
/// it holds twice the size (the small squares, `t`, `s` of most photos), else the preview
/// (`SizeRenderer`); `o` is the original as uploaded, and a size whose pixels are exactly the
/// preview's (`k` of most photos, every large size of a small photo) is the preview itself.
/// Renditions are kept in the blob store under `sizes/<objectId>/<size>.jpg`, bounded by
/// `size_cache_bytes` (`SizeCache`).
public final class SizeService: Sendable {
    let repository: SizeRepository
    let store: any BlobStore
    let spool: LocalBlobStore
    let spec: DerivativeSpec
    let limits: ImageLimits
    let cache: SizeCache
    let metrics: SizeMetrics
    private let flights = SingleFlight<BlobKey>()
    private let makeEncoder: @Sendable () -> ParseObjectEncoder

    /// A size of one photo as the API hands it out.
    public struct Rendition: Sendable {
        /// The absolute, signed asset URL.
        public var url: String
        /// Width in pixels.
        public var width: Int
        /// Height in pixels.
        public var height: Int
        /// The blob key the URL names.
        public var key: String
    }

    /// A service over `store` (reading originals and derivatives, writing renditions), listing
    /// renditions in `pool`, with URLs from `makeEncoder` (the app's current asset URL form).
    init(
        repository: SizeRepository, store: any BlobStore, spool: LocalBlobStore, spec: DerivativeSpec,
        limits: ImageLimits,
        cacheBytes: Int64, registry: PrometheusRegistry, logger: Logger,
        makeEncoder: @escaping @Sendable () -> ParseObjectEncoder
    ) {
        self.repository = repository
        self.store = store
        self.spool = spool
        self.spec = spec
        self.limits = limits
        self.metrics = SizeMetrics(registry: registry)
        self.cache = SizeCache(
            repository: repository, store: store, limitBytes: cacheBytes, metrics: metrics, logger: logger)
        self.makeEncoder = makeEncoder
    }

    /// The blob key of a rendition: `sizes/<objectId>/<size>.jpg`.
    public static func renditionKey(objectId: String, size: DisplaySize) throws -> BlobKey {
        try BlobKey("sizes/\(objectId)/\(size.rawValue).jpg")
    }

    /// Where `size` of `photo` is (or will be once rendered), and its pixel size; nil while the
    /// photo has no preview yet (not processed), except for the original.
    public func location(photo: SizedPhoto, size: DisplaySize) -> (key: String, width: Int, height: Int)? {
        if size == .o {
            let dimensions = size.dimensions(width: photo.width, height: photo.height)
            return (photo.originalKey, dimensions.width, dimensions.height)
        }
        guard let previewKey = photo.previewKey, let preview = photo.previewSize else { return nil }
        return Self.location(objectId: photo.objectId, preview: (previewKey, preview.width, preview.height), size: size)
    }

    /// Where a size other than the original is, from the photo's preview alone (what the manifest
    /// selects): its pixel size is fitted to the preview's (the preview is the original fitted to
    /// 2048, so this is the original's size fitted, up to the preview's rounding), and a size
    /// with exactly the preview's pixels is the preview itself.
    static func location(
        objectId: String, preview: (key: String, width: Int, height: Int), size: DisplaySize
    ) -> (key: String, width: Int, height: Int)? {
        guard size != .o else { return nil }
        let dimensions = size.dimensions(width: preview.width, height: preview.height)
        if !size.isSquare && dimensions == (preview.width, preview.height) {
            return (preview.key, preview.width, preview.height)
        }
        // A plausible objectId (ASCII letters and digits) always makes a valid key: built without
        // `BlobKey`'s validation, as a page of the Flickr API asks this for every photo.
        if ParseObjectID.isPlausible(objectId) {
            return ("sizes/" + objectId + "/" + size.rawValue + ".jpg", dimensions.width, dimensions.height)
        }
        guard let key = try? renditionKey(objectId: objectId, size: size) else { return nil }
        return (key.rawValue, dimensions.width, dimensions.height)
    }

    /// The signed URL and pixel size of `size` of `photo` (see the type's comment); `encoder`
    /// shares one answer's URL expiry, else a new one is made.
    public func rendition(photo: SizedPhoto, size: DisplaySize, encoder: ParseObjectEncoder? = nil) -> Rendition? {
        guard let (key, width, height) = location(photo: photo, size: size) else { return nil }
        let url = (encoder ?? makeEncoder()).url(forKey: key)
        return Rendition(url: url, width: width, height: height, key: key)
    }

    /// The blob key holding `size` of `photo`, rendered and stored first when it is a rendition
    /// not stored yet (see the type's comment). Throws `BlobStoreError.notFound` for a photo not
    /// processed yet, `ImageError` when its derivative does not decode.
    public func file(photo: SizedPhoto, size: DisplaySize) throws -> BlobKey {
        guard let (keyText, width, height) = location(photo: photo, size: size) else {
            throw BlobStoreError.notFound("sizes/\(photo.objectId)/\(size.rawValue).jpg")
        }
        let key = try BlobKey(keyText)
        guard keyText.hasPrefix("sizes/") else { return key }
        if try store.info(key) != nil {
            cache.touch(keyText)
            return key
        }
        return try flights.run(keyText) {
            // A request that waited for the lock of an earlier flight finds the file made.
            if try store.info(key) != nil { return key }
            // Across instances on one database: the first to take the key's lock renders; the
            // others wait for it, then find the file made.
            let rendered = try repository.whileHoldingRenderLock(keyText) {
                if try store.info(key) != nil { return false }
                try render(photo: photo, size: size, width: width, height: height, into: key)
                return true
            }
            if rendered { try cache.evict(keeping: keyText) }
            return key
        }
    }

    /// Renders, stores and lists one rendition (the caller then evicts down to the bound).
    private func render(photo: SizedPhoto, size: DisplaySize, width: Int, height: Int, into key: BlobKey) throws {
        let source = sourceKey(photo: photo, size: size, width: width, height: height)
        let image = try store.withLocalFile(source, spoolDirectory: spool.spoolDirectory, maxBytes: 1 << 30) { path in
            try SizeRenderer.render(
                fileAt: path, width: width, height: height, square: size.isSquare, spec: spec, limits: limits)
        }
        guard let image else { throw BlobStoreError.notFound(source.rawValue) }
        let info = try store.put(key, bytes: image.jpeg)
        metrics.renders.increment(1, size.rawValue)
        let entry = SizeRepository.Entry(
            photoId: photo.objectId, size: size.rawValue, blobKey: key.rawValue, bytes: info.size)
        guard try cache.record(entry) else {
            // Purged while it rendered: nothing would ever remove the file.
            _ = try? store.delete(key)
            throw BlobStoreError.notFound(key.rawValue)
        }
    }

    /// The smallest stored derivative that holds at least twice `width`×`height` (its centred square
    /// for a square size): the thumbnail when it does, else the preview.
    private func sourceKey(photo: SizedPhoto, size: DisplaySize, width: Int, height: Int) -> BlobKey {
        if let thumbnailKey = photo.thumbnailKey, let thumbnail = photo.thumbnailSize,
            let key = try? BlobKey(thumbnailKey)
        {
            let region =
                size.isSquare
                ? (min(thumbnail.width, thumbnail.height), min(thumbnail.width, thumbnail.height)) : thumbnail
            if region.0 >= 2 * width && region.1 >= 2 * height { return key }
        }
        // `location` returned a rendition only for a processed photo.
        return (try? BlobKey(photo.previewKey ?? "")) ?? (try! BlobKey(photo.originalKey))
    }

    /// The blob key holding `size` of photo `objectId`, rendered first if needed (the size route).
    func file(objectId: String, size: DisplaySize) throws -> BlobKey {
        guard let photo = try repository.photo(objectId) else {
            throw BlobStoreError.notFound("sizes/\(objectId)/\(size.rawValue).jpg")
        }
        return try file(photo: photo, size: size)
    }
}
