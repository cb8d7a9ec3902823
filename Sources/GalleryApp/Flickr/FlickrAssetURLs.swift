/// Photo URLs in Flickr's shape, `<base>/flickr-assets/<server>/<id>_<secret>[_<suffix>].jpg` (the original:
/// `_o.<originalformat>`),
/// served by `FlickrAssetRoutes`. Clients rewrite the suffix (PhotoViewer turns `url_s`'s `_m`
/// into `_t` and `_h`), which works because every display size shares the photo's `secret`; the
/// original (`_o`) has its own `originalsecret`.
struct FlickrAssetURLs: Sendable {
    /// The first path segment of the URLs.
    static let prefix = "/flickr-assets"
    /// Flickr's `server` of every photo (clients only copy it into URLs).
    static let server = "1"
    /// Flickr's `farm` of every photo.
    static let farm = 1

    /// Makes the secrets; nil when no `url_signing_key` is set (the URLs are then refused).
    let secrets: FlickrSecrets?
    /// The server's public URL (no trailing slash), read per call: it is known once the port is bound.
    let publicURL: @Sendable () -> String

    /// The secret of photo `id`'s display sizes (empty without a signing key).
    func secret(_ id: String) -> String { secrets?.secret(photoId: id) ?? "" }

    /// The secret of photo `id`'s original.
    func originalSecret(_ id: String) -> String { secrets?.originalSecret(photoId: id) ?? "" }

    /// The original's file extension, Flickr's `originalformat` (`jpg`, `png`, `heic`…).
    func format(_ photo: FlickrPhoto) -> String {
        let key = photo.sized.originalKey
        guard let dot = key.lastIndex(of: "."), !key[dot...].contains("/") else { return "jpg" }
        let ext = key[key.index(after: dot)...].lowercased()
        return ext == "jpeg" ? "jpg" : ext
    }

    /// The absolute URL of `size` of `photo`. A page of photos passes what it already has: the
    /// photo's `displaySecret` (`secret(_:)`, one MAC a photo for all its URLs) and `base`
    /// (`publicURL()`, read once a page).
    func url(_ photo: FlickrPhoto, size: DisplaySize, displaySecret: String? = nil, base: String? = nil) -> String {
        let secret = size == .o ? originalSecret(photo.id) : displaySecret ?? secret(photo.id)
        let suffix = size.fileSuffix.isEmpty ? "" : "_" + size.fileSuffix
        let ext = size == .o ? format(photo) : "jpg"
        return (base ?? publicURL()) + Self.prefix + "/" + Self.server + "/" + photo.id + "_" + secret + suffix + "."
            + ext
    }
}
