import BlobStore
import Foundation
import HTTPServer
import Logging

/// The path-style, S3-like read API: `GET` and `HEAD /<bucket>/<key>` (signed:
/// `/<bucket>/s/<expires>/<signature>/<key>`) straight from the blob store with sendfile, strong
/// validators, ranges, and caching: immutable for a public bucket, private until the signature
/// expires for a signed URL. With S3 storage the same URLs
/// either stream the object through (`BucketProxy`: bounded memory, backpressure, the same Range,
/// ETag and 304 handling) or answer 307 to a short-lived presigned URL.
struct BucketRoutes {
    /// The bucket name in the path.
    let bucket: String
    /// Where the bytes are (local storage).
    let store: LocalBlobStore
    /// The object store when `storage = "s3"`, nil for local storage.
    var remote: S3BlobStore? = nil
    /// Streams objects of `remote` when `asset_delivery = "proxy"`.
    var proxy: BucketProxy? = nil
    /// `asset_delivery = "redirect"`: answer 307 to a presigned URL instead of proxying.
    var redirect = false
    /// Seconds the presigned URLs of `redirect` stay valid.
    var presignedSeconds = 300
    /// Who may read: anyone (`bucket_public`), or only signed URLs.
    var access: Access = .public
    /// Logs refused requests.
    let logger: Logger

    /// Who may read the bucket.
    enum Access: Sendable {
        /// Anyone who knows a key (`bucket_public = true`).
        case `public`
        /// Only URLs signed by this signer, unexpired; nil (no usable key) refuses every request.
        case signed(AssetURLSigner?)
    }

    /// The `Cache-Control` of signed answers, shared by the routes of this bucket.
    let privateHeaders = PrivateCacheHeaders()

    /// 307: the client repeats the same request at `Location` (RFC 9110 §15.4.8).
    static let temporaryRedirect = HTTPStatus(307, "Temporary Redirect")

    /// Originals are content-addressed and derivatives are rewritten only when reprocessed under a
    /// new validator, so clients may cache them for a year.
    static let cacheControl = "public, max-age=31536000, immutable"

    /// Registers the routes through `router` (the bucket's group: browser access) and the S3 XML
    /// error format for the bucket's URL space.
    func register(on router: HTTPRouteGroup) {
        let prefix = "/" + bucket
        let errors = S3ErrorResponder(bucket: bucket, logger: logger)
        router.mount(prefix: prefix, errorResponder: errors)
        let store = self.store
        let access = self.access
        let privateHeaders = self.privateHeaders
        if let remote {
            let proxy =
                redirect
                ? nil
                : self.proxy ?? BucketProxy(remote: remote, maxStreams: 64, bufferBytes: 256 << 10, logger: logger)
            let seconds = self.presignedSeconds
            // Talks to the object store (until its answer head is in): blocking, so on the handler pool.
            router.add(
                HTTPRoute(.get, prefix + "/*key", mayBlock: true) { request in
                    let (key, headers) = try Self.authorize(request, access, privateHeaders)
                    return try Self.getRemote(
                        request, key: key, headers: headers, remote: remote, proxy: proxy, presignedSeconds: seconds,
                        errors: errors)
                })
            return
        }
        // Serving is a stat and a sendfile: cheap enough to run inline on the connection's queue.
        router.add(
            HTTPRoute(.get, prefix + "/*key", mayBlock: false) { request in
                try Self.getLocal(request, access, privateHeaders, store: store, errors: errors)
            })
    }

    /// The local store's answer to a bucket GET, authorized as `authorize` does. With signed access
    /// the key is read in place from the request's path: the signature check and the open-file cache
    /// look it up by its bytes with one hash, and when both hit no String is made of it (decision 041,
    /// round 9). The store is still touched only once the signature holds.
    static func getLocal(
        _ request: HTTPRequest, _ access: Access, _ privateHeaders: PrivateCacheHeaders, store: LocalBlobStore,
        errors: S3ErrorResponder
    ) throws -> HTTPResponse {
        guard case .signed(let signer) = access, let signer else {
            let (key, headers) = try authorize(request, access, privateHeaders)
            return try get(request, key: key, headers: headers, store: store, errors: errors)
        }
        let captured = request.pathParameters.substring("key") ?? ""
        let now = Int64(time(nil))
        let (key, blob, expires) = try signer.withVerifiedKey(captured: captured, query: request.query, now: now) {
            key, expires -> (BlobKey, BlobFile, Int64) in
            let (key, blob) = try openBlob(key, in: store)
            return (key, blob, expires)
        }
        return respond(
            request, key: key, blob: blob, headers: privateHeaders.headers(maxAge: expires - now), errors: errors)
    }

    /// Before anything touches the store, the blob key to serve and the headers to add: with
    /// signed access, the request's signature (in the path, `s/<expires>/<sig>/<key>`, or the
    /// query of URLs handed out before) must match its key and expiry, and the expiry must not
    /// have passed nor lie beyond what this server issues (`AssetURLError`, a 403 `AccessDenied`).
    /// A hash (or a cache hit) and a clock read, no database. A signed answer may be kept only by
    /// the client, and only until its signature expires; a public one by anyone, for a year.
    /// `captured` is the path after the bucket when the route splits it into several parameters
    /// (the size routes); by default the `*key` capture.
    static func authorize(
        _ request: HTTPRequest, _ access: Access, _ privateHeaders: PrivateCacheHeaders, captured: Substring? = nil
    ) throws -> (key: String, headers: HTTPHeaders) {
        // The capture is read in place, as a piece of the request's path: only the key becomes a String.
        let captured = captured ?? request.pathParameters.substring("key") ?? ""
        guard case .signed(let signer) = access else {
            return (AssetURLSigner.unsignedKey(captured: captured), fixedHeaders)
        }
        guard let signer else { throw AssetURLError.noSigningKey }
        let now = Int64(time(nil))
        let (key, expires) = try signer.verify(captured: captured, query: request.query, now: now)
        return (key, privateHeaders.headers(maxAge: expires - now))
    }

    /// Added to every public answer; built once (HTTPFileResponse copies it into each response).
    static let fixedHeaders: HTTPHeaders = ["Cache-Control": cacheControl]

    /// The answer for `key` of the local store (`openBlob`, then `respond`).
    static func get(
        _ request: HTTPRequest, key: String, headers: HTTPHeaders, store: LocalBlobStore, errors: S3ErrorResponder
    ) throws -> HTTPResponse {
        let (key, blob) = try openBlob(key, in: store)
        return respond(request, key: key, blob: blob, headers: headers, errors: errors)
    }

    /// The blob to serve, opened once: validators come from fstat of the descriptor the bytes are
    /// sent from. Shared with the open-file cache: a hot blob costs no open, dup or close per request,
    /// nor a validation of its key (`openShared(validating:)`).
    static func openBlob(_ key: String, in store: LocalBlobStore) throws -> (BlobKey, BlobFile) {
        guard let opened = try store.openShared(validating: key) else { throw BlobStoreError.notFound(key) }
        return opened
    }

    /// `openBlob` for a key given with its hash, possibly borrowed from the request's path: the
    /// open-file cache is looked up by its bytes (`LocalBlobStore.openShared(validating:)`).
    static func openBlob(_ key: HashedKey, in store: LocalBlobStore) throws -> (BlobKey, BlobFile) {
        guard let opened = try store.openShared(validating: key) else { throw BlobStoreError.notFound(key.string) }
        return opened
    }

    /// The answer for an open blob: 200, 206, 304, or 412/416 with S3's XML error document.
    static func respond(
        _ request: HTTPRequest, key: BlobKey, blob: BlobFile, headers: HTTPHeaders, errors: S3ErrorResponder
    ) -> HTTPResponse {
        let file = HTTPFileResponse.File(
            path: key.rawValue, size: Int(blob.info.size), etag: blob.info.etag, lastModified: blob.info.modified,
            contentType: contentType(for: key), descriptor: HTTPFileDescriptor(sharing: blob.fd, keptOpenBy: blob),
            lastModifiedText: blob.lastModified)
        return fromMemory(respond(request, file: consume file, headers: headers, errors: errors), blob: blob)
    }

    /// The largest blob sent from memory rather than with sendfile: above a thumbnail (5–12 KB) and
    /// the `s` and `n` display sizes of most photos (3–12 KB), so at most the open-file cache's
    /// entries times this is held in memory (decisions 059, 041).
    static let inMemoryBytes = 16 << 10

    /// `response` with its file body taken from the blob's bytes in memory when the file is small
    /// (`BlobFile.contents(atMost:)`): the head and the body then leave in one `sendmsg`, where a
    /// file body costs a second system call and the kernel's splice path for a few KB. Status,
    /// head fields and bytes stay those of the file answer (200, 206 with its range; a 304 or
    /// HEAD sends no body either way).
    static func fromMemory(_ response: consuming HTTPResponse, blob: BlobFile) -> HTTPResponse {
        guard case .descriptor(_, let offset, let length) = response.body,
            let bytes = blob.contents(atMost: inMemoryBytes), offset >= 0, offset + length <= bytes.count
        else { return response }
        response.body =
            offset == 0 && length == bytes.count ? .bytes(bytes) : .bytes(Array(bytes[offset..<offset + length]))
        return response
    }

    /// An object of the S3 store: streamed through `proxy`, or (without one: `redirect`) a 307 to a
    /// presigned URL.
    static func getRemote(
        _ request: HTTPRequest, key: String, headers: HTTPHeaders, remote: S3BlobStore, proxy: BucketProxy?,
        presignedSeconds: Int, errors: S3ErrorResponder
    ) throws -> HTTPResponse {
        let key = try BlobKey(key)
        guard let proxy else {
            let url = remote.presignedURL(key, expires: presignedSeconds)
            // The URL expires, so neither it nor this answer may be cached beyond that.
            return HTTPResponse(
                status: temporaryRedirect, headers: ["Location": url.absoluteString, "Cache-Control": "no-store"])
        }
        return try proxy.respond(
            request, key: key, contentType: contentType(for: key), headers: headers, errors: errors)
    }

    /// The answer for a file: 200, 206, 304, or 412/416 with S3's XML error document. The file is
    /// taken, not borrowed, so it goes on to `HTTPFileResponse.make` without a copy.
    static func respond(
        _ request: HTTPRequest, file: consuming HTTPFileResponse.File, headers: HTTPHeaders, errors: S3ErrorResponder
    ) -> HTTPResponse {
        respond(
            request, response: HTTPFileResponse.make(for: request, file: consume file, headers: headers), errors: errors
        )
    }

    /// `response` with S3's XML error document in place of the body of a 412 or 416.
    static func respond(_ request: HTTPRequest, response: consuming HTTPResponse, errors: S3ErrorResponder)
        -> HTTPResponse
    {
        // 412 and 416 carry S3's XML error document (PreconditionFailed, InvalidRange), as S3 clients expect.
        if response.status.code >= 400 {
            let message =
                response.status == .rangeNotSatisfiable
                ? "The requested range is not satisfiable."
                : "At least one of the preconditions you specified did not hold."
            let document = errors.response(status: response.status, message: message, request: request)
            response.body = document.body
            response.headers["Content-Type"] = document.headers["Content-Type"]
        }
        return response
    }

    /// The `Content-Type` of a key, by its extension (ASCII case-insensitive): the key's last five
    /// bytes read once from its contiguous UTF-8 and compared as words, not an index walk of the
    /// UTF-8 view per extension tried (~280 instructions a bucket GET, decision 041 round 9).
    static func contentType(for key: BlobKey) -> String {
        let utf8 = key.rawValue.utf8
        let tail = utf8.withContiguousStorageIfAvailable(lowercasedTail) ?? lowercasedTail(Array(utf8.suffix(5)))
        let four = tail & 0xFFFF_FFFF
        if four == Extension.jpg || tail == Extension.jpeg { return "image/jpeg" }
        if four == Extension.png { return "image/png" }
        if tail == Extension.webp { return "image/webp" }
        if tail == Extension.heic || tail == Extension.heif { return "image/heic" }
        if tail == Extension.avif { return "image/avif" }
        return "application/octet-stream"
    }

    /// The extensions `contentType(for:)` knows, as `lowercasedTail` packs them.
    private enum Extension {
        static let jpg = lowercasedTail(".jpg")
        static let jpeg = lowercasedTail(".jpeg")
        static let png = lowercasedTail(".png")
        static let webp = lowercasedTail(".webp")
        static let heic = lowercasedTail(".heic")
        static let heif = lowercasedTail(".heif")
        static let avif = lowercasedTail(".avif")
    }

    /// The last five bytes of `name` (all of a shorter one), ASCII letters lowercased, packed into a
    /// word with the last byte lowest: the last four bytes are then the low 32 bits.
    static func lowercasedTail(_ name: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var word: UInt64 = 0
        for byte in name.suffix(5) {
            let lower = (byte >= 65 && byte <= 90) ? byte | 0x20 : byte
            word = word << 8 | UInt64(lower)
        }
        return word
    }

    private static func lowercasedTail(_ name: [UInt8]) -> UInt64 { name.withUnsafeBufferPointer(lowercasedTail) }

    private static func lowercasedTail(_ name: StaticString) -> UInt64 {
        lowercasedTail(UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
    }
}
