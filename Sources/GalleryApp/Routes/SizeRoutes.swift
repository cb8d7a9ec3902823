import BlobStore
import Foundation
import HTTPServer
import Logging

/// The display sizes under the bucket: `GET /<bucket>/s/<expires>/<sig>/sizes/<objectId>/<size>.jpg`
/// (and `/<bucket>/sizes/…` with `bucket_public`), checked as every bucket URL is
/// (`BucketRoutes.authorize`), then served as the bucket serves a thumbnail (sendfile, ETag,
/// Range, 304; or the S3 proxy or redirect). A size not stored yet is rendered first
/// (`SizeService.file`), one render per photo and size whatever the concurrency. These literal
/// paths take precedence over the bucket's `*key`; every other key is the bucket's as before.
struct SizeRoutes: Sendable {
    /// The bucket routes whose URL space, access and delivery these share.
    let bucket: BucketRoutes
    /// Finds and renders the sizes.
    let sizes: SizeService

    /// Registers the signed and the unsigned form, after `BucketRoutes.register` (its mount and
    /// error format apply).
    func register(on routes: HTTPRouteGroup) {
        let prefix = "/" + bucket.bucket
        let sizeRoutes = self
        // A size already stored on local storage is served inline, as the bucket serves a file.
        var inline: (@Sendable (HTTPRequest) -> HTTPResponse?)? = nil
        if bucket.remote == nil {
            inline = { request -> HTTPResponse? in
                do { return try sizeRoutes.serveStored(request) } catch { return nil }
            }
        }
        for pattern in [prefix + "/s/:expires/:signature/sizes/:photo/:file", prefix + "/sizes/:photo/:file"] {
            let handler = HTTPClosureHandler { request in try sizeRoutes.serve(request) }
            routes.add(HTTPRoute(.get, pattern, mayBlock: true, inlineAnswer: inline, handler: handler))
        }
    }

    /// The blob key the request names after its signature is checked, its size, and the headers.
    private func authorize(_ request: HTTPRequest) throws -> (
        key: String, size: DisplaySize, objectId: String, headers: HTTPHeaders
    ) {
        let parameters = request.pathParameters
        let photo = parameters["photo"] ?? ""
        let file = parameters["file"] ?? ""
        var captured = "sizes/\(photo)/\(file)"
        if let expires = parameters["expires"], let signature = parameters["signature"] {
            captured = "\(AssetURLSigner.pathMarker)/\(expires)/\(signature)/" + captured
        }
        let (key, headers) = try BucketRoutes.authorize(
            request, bucket.access, bucket.privateHeaders, captured: captured)
        guard file.hasSuffix(".jpg"), let size = DisplaySize(rawValue: String(file.dropLast(4))), size != .o else {
            let names = DisplaySize.rendered.map(\.rawValue).joined(separator: ", ")
            throw HTTPError(.badRequest, "Unknown display size \(file): one of \(names), as <size>.jpg.")
        }
        return (key, size, photo, headers)
    }

    /// The answer for a size already in the local store; throws (the handler then renders, or
    /// answers the error) when it is not stored yet or the request is refused.
    private func serveStored(_ request: HTTPRequest) throws -> HTTPResponse {
        let (key, _, _, headers) = try authorize(request)
        let response = try BucketRoutes.get(request, key: key, headers: headers, store: bucket.store, errors: errors)
        sizes.cache.touch(key)
        return response
    }

    /// Serves the size, rendering it first when it is not stored.
    private func serve(_ request: HTTPRequest) throws -> HTTPResponse {
        let (_, size, objectId, headers) = try authorize(request)
        let key = try sizes.file(objectId: objectId, size: size)
        if let remote = bucket.remote {
            let proxy = bucket.redirect ? nil : bucket.proxy
            return try BucketRoutes.getRemote(
                request, key: key.rawValue, headers: headers, remote: remote, proxy: proxy,
                presignedSeconds: bucket.presignedSeconds, errors: errors)
        }
        return try BucketRoutes.get(request, key: key.rawValue, headers: headers, store: bucket.store, errors: errors)
    }

    private var errors: S3ErrorResponder { S3ErrorResponder(bucket: bucket.bucket, logger: bucket.logger) }
}
