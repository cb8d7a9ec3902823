import BlobStore
import Foundation
import HTTPServer
import Logging

/// The display sizes under the bucket: `GET /<bucket>/s/<expires>/<sig>/sizes/<objectId>/<size>.jpg`
/// (and `/<bucket>/sizes/…` with `bucket_public`), checked as every bucket URL is
/// (`BucketRoutes.authorize`), then served as the bucket serves a thumbnail (ETag, Range, 304;
/// or the S3 proxy or redirect), a small stored file from memory (`BucketRoutes.fromMemory`). A size not stored yet is rendered first
/// (`SizeService.file`), one render per photo and size whatever the concurrency. These literal
/// paths take precedence over the bucket's `*key`; every other key is the bucket's as before.
struct SizeRoutes: Sendable {
    /// The bucket routes whose URL space, access and delivery these share.
    let bucket: BucketRoutes
    /// Finds and renders the sizes.
    let sizes: SizeService
    /// `/<bucket>/` as bytes: a size path is read in place after it.
    private let pathPrefix: [UInt8]
    /// The bucket's S3 XML error format, made once.
    private let errors: S3ErrorResponder

    /// The size routes of `bucket`, served from `sizes`.
    init(bucket: BucketRoutes, sizes: SizeService) {
        self.bucket = bucket
        self.sizes = sizes
        self.pathPrefix = Array("/\(bucket.bucket)/".utf8)
        self.errors = S3ErrorResponder(bucket: bucket.bucket, logger: bucket.logger)
    }

    /// Registers the signed and the unsigned form, after `BucketRoutes.register` (its mount and
    /// error format apply).
    func register(on routes: HTTPRouteGroup) {
        let prefix = "/" + bucket.bucket
        let sizeRoutes = self
        // A size already stored on local storage is served inline, as the bucket serves a file.
        var inline: (@Sendable (HTTPRequest) -> HTTPResponse?)? = nil
        if bucket.remote == nil {
            inline = { request in sizeRoutes.serveStored(request) }
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
        let captured = captured(request)
        let (key, headers) = try BucketRoutes.authorize(
            request, bucket.access, bucket.privateHeaders, captured: captured)
        guard let size = Self.size(named: captured) else {
            let file = request.pathParameters["file"] ?? ""
            let names = DisplaySize.rendered.map(\.rawValue).joined(separator: ", ")
            throw HTTPError(.badRequest, "Unknown display size \(file): one of \(names), as <size>.jpg.")
        }
        return (key, size, request.pathParameters["photo"] ?? "", headers)
    }

    /// What the bucket checks and serves: the path after `/<bucket>/`, read in place (the route's
    /// captures are pieces of that path: `sizes/<photo>/<file>`, after `s/<expires>/<signature>/`
    /// in the signed form), rebuilt from the captures only for a request whose path is elsewhere
    /// (matched through canonical equivalence: not all ASCII).
    private func captured(_ request: HTTPRequest) -> Substring {
        let path = request.path
        let utf8 = path.utf8
        let inPlace =
            utf8.withContiguousStorageIfAvailable { path in
                pathPrefix.withUnsafeBufferPointer { prefix in
                    path.count > prefix.count && memcmp(path.baseAddress!, prefix.baseAddress!, prefix.count) == 0
                }
            } ?? false
        if inPlace {
            return Substring(utf8[utf8.index(utf8.startIndex, offsetBy: pathPrefix.count)...])
        }
        let parameters = request.pathParameters
        var captured = "sizes/\(parameters["photo"] ?? "")/\(parameters["file"] ?? "")"
        if let expires = parameters["expires"], let signature = parameters["signature"] {
            captured = "\(AssetURLSigner.pathMarker)/\(expires)/\(signature)/" + captured
        }
        return Substring(captured)
    }

    /// The rendered size a file name `<size>.jpg` names (or a path ending in one: its last
    /// segment), or nil (unknown, or the original). Read from the bytes, without a String.
    static func size(named path: Substring) -> DisplaySize? {
        let found = path.utf8.withContiguousStorageIfAvailable { path -> DisplaySize? in
            let end = path.count - 4
            guard end > 0, path[end] == UInt8(ascii: "."), path[end + 1] == UInt8(ascii: "j"),
                path[end + 2] == UInt8(ascii: "p"), path[end + 3] == UInt8(ascii: "g")
            else { return nil }
            var start = end
            while start > 0 && path[start - 1] != UInt8(ascii: "/") { start -= 1 }
            return DisplaySize(rawValueBytes: UnsafeBufferPointer(rebasing: path[start..<end]))
        }
        guard let size = found ?? nil, size != .o else { return nil }
        return size
    }

    /// The answer for a size already in the local store, or nil (the handler then renders, or
    /// answers the error) when it is not stored yet or the request is refused. Reads the path in
    /// place: no capture becomes a String, and only the blob key is made.
    private func serveStored(_ request: HTTPRequest) -> HTTPResponse? {
        let captured = captured(request)
        guard Self.size(named: captured) != nil,
            let (key, headers) = try? BucketRoutes.authorize(
                request, bucket.access, bucket.privateHeaders, captured: captured),
            let (blobKey, blob) = try? BucketRoutes.openBlob(key, in: bucket.store)
        else { return nil }
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
}
