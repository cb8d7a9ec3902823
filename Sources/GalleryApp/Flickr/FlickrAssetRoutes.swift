import BlobStore
import Foundation
import HTTPServer
import Imaging

/// `GET /flickr-assets/<server>/<id>_<secret>[_<suffix>].jpg` (`FlickrAssetURLs`): checks the
/// secret (constant time, no database), then serves the size through the display sizes
/// (`SizeService.file`: rendered on first request, one render however many ask) and the bucket's
/// delivery (sendfile, ETag, Range, 304; or the S3 proxy or redirect). Errors are plain text:
/// 400 for a name that is not a Flickr file name or an unknown suffix, 403 for a wrong secret,
/// 404 for a photo that is gone or not processed yet.
struct FlickrAssetRoutes: Sendable {
    /// The bucket whose store and delivery these share.
    let bucket: BucketRoutes
    /// Finds and renders the sizes.
    let sizes: SizeService
    /// Checks the secrets; nil without a `url_signing_key` (every URL is refused).
    let secrets: FlickrSecrets?

    /// How long a client may keep a size (the capability does not expire, access may change).
    static let maxAgeSeconds: Int64 = 86_400

    /// Registers the route.
    func register(on router: HTTPRouter) {
        let routes = self
        router.add(
            HTTPRoute(
                .get, FlickrAssetURLs.prefix + "/:server/:file", mayBlock: true,
                handler: HTTPClosureHandler { request in routes.serve(request) }))
    }

    /// The photo id, secret and size a file name names, or the 400 answer.
    static func parse(_ file: String) -> Result<(id: String, secret: String, size: DisplaySize), HTTPError> {
        guard let dot = file.lastIndex(of: ".") else {
            return .failure(HTTPError(.badRequest, "Not a photo file name."))
        }
        let parts = file[..<dot].split(separator: "_", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 2 || parts.count == 3, ParseObjectID.isPlausible(parts[0]), !parts[1].isEmpty else {
            return .failure(HTTPError(.badRequest, "Not a photo file name: <id>_<secret>[_<suffix>].jpg."))
        }
        let suffix = parts.count == 3 ? parts[2] : ""
        guard let size = DisplaySize(fileSuffix: suffix) else {
            return .failure(
                HTTPError(
                    .badRequest,
                    "Unknown size suffix _\(suffix.prefix(16)): one of s, q, t, m, n, w, z, c, b, h, k, o, or none."))
        }
        guard size == .o || file[dot...].lowercased() == ".jpg" else {
            return .failure(HTTPError(.badRequest, "Display sizes are .jpg files."))
        }
        return .success((parts[0], parts[1], size))
    }

    /// Serves one file.
    func serve(_ request: HTTPRequest) -> HTTPResponse {
        let named: (id: String, secret: String, size: DisplaySize)
        switch Self.parse(request.pathParameters["file"] ?? "") {
        case .success(let parsed): named = parsed
        case .failure(let error): return .text(error.message + "\n", status: error.status)
        }
        guard let secrets, secrets.verify(named.secret, photoId: named.id, original: named.size == .o) else {
            return .text("Access denied: wrong secret.\n", status: .forbidden)
        }
        do {
            let key = try sizes.file(objectId: named.id, size: named.size)
            let headers: HTTPHeaders = ["Cache-Control": "private, max-age=\(Self.maxAgeSeconds)"]
            let errors = S3ErrorResponder(bucket: bucket.bucket, logger: bucket.logger)
            if let remote = bucket.remote {
                return try BucketRoutes.getRemote(
                    request, key: key.rawValue, headers: headers, remote: remote,
                    proxy: bucket.redirect ? nil : bucket.proxy,
                    presignedSeconds: bucket.presignedSeconds, errors: errors)
            }
            return try BucketRoutes.get(
                request, key: key.rawValue, headers: headers, store: bucket.store, errors: errors)
        } catch BlobStoreError.notFound(_) {
            return .text("No such photo, or not processed yet.\n", status: .notFound)
        } catch {
            bucket.logger.error(
                "flickr asset failed", metadata: ["request": "\(request.requestID)", "error": "\(error)"])
            return .text("The photo could not be served.\n", status: .serviceUnavailable)
        }
    }
}
