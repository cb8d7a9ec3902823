import BlobStore
import Foundation
import HTTPServer
import Logging

/// The path-style, S3-like read API: `GET` and `HEAD /<bucket>/<key>` straight from the blob store
/// with sendfile, strong validators, ranges and immutable caching.
struct BucketRoutes {
    /// The bucket name in the path.
    let bucket: String
    /// Where the bytes are.
    let store: LocalBlobStore
    /// Logs refused requests.
    let logger: Logger

    /// Originals are content-addressed and derivatives are rewritten only when reprocessed under a
    /// new validator, so clients may cache them for a year.
    static let cacheControl = "public, max-age=31536000, immutable"

    /// Registers the routes and the S3 XML error format for the bucket's URL space.
    func register(on router: HTTPRouter) {
        let prefix = "/" + bucket
        router.mount(prefix: prefix, errorResponder: S3ErrorResponder(bucket: bucket, logger: logger))
        let store = self.store
        let errors = S3ErrorResponder(bucket: bucket, logger: logger)
        // Serving is a stat and a sendfile: cheap enough to run inline on the connection's queue.
        router.add(HTTPRoute(.get, prefix + "/*key", mayBlock: false) { request in
            try Self.get(request, store: store, errors: errors)
        })
    }

    static func get(_ request: HTTPRequest, store: LocalBlobStore, errors: S3ErrorResponder) throws -> HTTPResponse {
        let key = try BlobKey(request.pathParameters["key"] ?? "")
        guard let info = try store.info(key) else { throw BlobStoreError.notFound(key.rawValue) }
        let file = HTTPFileResponse.File(
            path: store.path(for: key), size: Int(info.size), etag: info.etag, lastModified: info.modified,
            contentType: contentType(for: key))
        var response = HTTPFileResponse.make(for: request, file: file, headers: ["Cache-Control": cacheControl])
        // 412 and 416 carry S3's XML error document (PreconditionFailed, InvalidRange), as S3 clients expect.
        if response.status.code >= 400 {
            let message = response.status == .rangeNotSatisfiable
                ? "The requested range is not satisfiable." : "At least one of the preconditions you specified did not hold."
            let document = errors.response(status: response.status, message: message, request: request)
            response.body = document.body
            response.headers["Content-Type"] = document.headers["Content-Type"]
        }
        return response
    }

    static func contentType(for key: BlobKey) -> String {
        let name = key.lastComponent.lowercased()
        if name.hasSuffix(".jpg") || name.hasSuffix(".jpeg") { return "image/jpeg" }
        if name.hasSuffix(".png") { return "image/png" }
        if name.hasSuffix(".webp") { return "image/webp" }
        return "application/octet-stream"
    }
}
