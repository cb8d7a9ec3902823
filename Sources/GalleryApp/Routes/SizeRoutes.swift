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
        let file = parameters.substring("file") ?? ""
        let (key, headers) = try BucketRoutes.authorize(
            request, bucket.access, bucket.privateHeaders, captured: captured(request))
        guard let size = Self.size(named: file) else {
            let names = DisplaySize.rendered.map(\.rawValue).joined(separator: ", ")
            throw HTTPError(.badRequest, "Unknown display size \(file): one of \(names), as <size>.jpg.")
        }
        return (key, size, photo, headers)
    }

    /// What the bucket checks and serves: the path after `/<bucket>/`, read in place (the route's
    /// captures are pieces of that path: `sizes/<photo>/<file>`, after `s/<expires>/<signature>/`
    /// in the signed form), rebuilt from the captures only for a request whose path is elsewhere.
    private func captured(_ request: HTTPRequest) -> Substring {
        let path = request.path
        let prefix = bucket.bucket.utf8.count + 2
        let utf8 = path.utf8
        if utf8.count > prefix && utf8.first == UInt8(ascii: "/") && utf8.dropFirst().starts(with: bucket.bucket.utf8)
            && utf8[utf8.index(utf8.startIndex, offsetBy: prefix - 1)] == UInt8(ascii: "/")
        {
            return Substring(utf8.dropFirst(prefix))
        }
        let parameters = request.pathParameters
        var captured = "sizes/\(parameters["photo"] ?? "")/\(parameters["file"] ?? "")"
        if let expires = parameters["expires"], let signature = parameters["signature"] {
            captured = "\(AssetURLSigner.pathMarker)/\(expires)/\(signature)/" + captured
        }
        return Substring(captured)
    }

    /// The rendered size a file name `<size>.jpg` names, or nil (unknown, or the original).
    static func size(named file: Substring) -> DisplaySize? {
        let name = file.utf8
        guard name.count > 4, name.suffix(4).elementsEqual(".jpg".utf8),
            let size = DisplaySize(rawValue: String(Substring(name.dropLast(4)))), size != .o
        else { return nil }
        return size
    }

    /// The answer for a size already in the local store; throws (the handler then renders, or
    /// answers the error) when it is not stored yet or the request is refused.
    private func serveStored(_ request: HTTPRequest) throws -> HTTPResponse {
        let (key, _, _, headers) = try authorize(request)
        let (blobKey, blob) = try BucketRoutes.openBlob(key, in: bucket.store)
        sizes.cache.touch(key, servedFrom: blob)
        return BucketRoutes.respond(request, key: blobKey, blob: blob, headers: headers, errors: errors)
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
