import BlobStore
import Foundation
import HTTPServer
import Logging
import Synchronization

/// `asset_delivery = "proxy"`: the bucket's objects streamed from the S3 store to the client as
/// they arrive. A pump thread per download GETs the object (with the client's Range) and writes
/// it into an `HTTPBodyStream`; the connection sends the head as soon as the store's head is in and
/// each chunk as it comes. Memory per download is bounded by the stream's buffer (the pump waits
/// while it is full, so a slow client slows the GET instead of filling memory), the client going
/// away cancels the stream (the pump's next write throws, and its S3 connection is closed, never
/// pooled half read), and the store failing mid-body closes the client's connection.
///
/// Conditional requests (`If-None-Match`, `If-Match`, `If-Modified-Since`, `If-Unmodified-Since`,
/// `If-Range`) are decided here with the same rules as local files (`HTTPFileResponse`) from a
/// HEAD of the object, because S3 implementations differ in what they accept (lists, weak tags,
/// `*`); the GET that follows, if any, is pinned to that ETag with `If-Match`.
final class BucketProxy: Sendable {
    /// The object store.
    let remote: S3BlobStore
    /// Downloads streaming at once at most; more are answered 503 SlowDown with `Retry-After`.
    let maxStreams: Int
    /// Bytes each download buffers at most between the store and the client.
    let bufferBytes: Int
    private let logger: Logger
    /// Downloads whose pump is running.
    private let active = Mutex(0)
    /// Body bytes read from the store (counted per chunk, so an atomic rather than a lock).
    private let fromStore = Atomic<Int64>(0)

    /// A proxy over `remote`.
    init(remote: S3BlobStore, maxStreams: Int, bufferBytes: Int, logger: Logger) {
        self.remote = remote
        self.maxStreams = max(1, maxStreams)
        self.bufferBytes = max(16 * 1024, bufferBytes)
        self.logger = logger
    }

    /// Downloads whose pump is running now (reading from the store or waiting for the client).
    var activeStreams: Int {
        active.withLock { $0 }
    }

    /// Body bytes read from the store by this process's downloads, since start.
    var bytesFromStore: Int64 {
        fromStore.load(ordering: .relaxed)
    }

    /// The request headers that make the answer depend on the object's validators.
    private static let conditionalHeaders = [
        "If-Match", "If-None-Match", "If-Modified-Since", "If-Unmodified-Since", "If-Range",
    ]

    /// The answer to a GET or HEAD of `key`: 200 or 206 streaming, 304, or 412/416 in S3 XML.
    func respond(
        _ request: HTTPRequest, key: BlobKey, contentType: String, headers fixed: HTTPHeaders, errors: S3ErrorResponder
    ) throws -> HTTPResponse {
        let method = request.method == .head ? "HEAD" : "GET"
        if Self.conditionalHeaders.contains(where: { request.headers[$0] != nil }) {
            return try respondConditionally(
                request, key: key, method: method, contentType: contentType, headers: fixed, errors: errors)
        }
        // The common case, one request to the store: the client's Range goes along when it is a
        // single byte range (anything else is answered whole, as for local files, RFC 9110 §14.2).
        var forwarded: [(String, String)] = []
        if let range = request.headers["Range"], HTTPFileResponse.parseRange(range, size: Int.max) != .none {
            forwarded.append(("range", range))
        }
        let (answer, stream) = try start(key, method: method, headers: forwarded)
        switch answer.status {
        case 200, 206:
            var headers = fixed
            headers["ETag"] = answer.header("etag") ?? ""
            if let modified = answer.header("last-modified") { headers["Last-Modified"] = modified }
            headers["Accept-Ranges"] = "bytes"
            headers["Content-Type"] = contentType
            if answer.status == 206, let contentRange = answer.header("content-range") {
                headers["Content-Range"] = contentRange
            }
            let length = try Self.contentLength(answer, key: key)
            return HTTPResponse(
                status: answer.status == 206 ? .partialContent : .ok, headers: headers,
                body: .stream(stream, length: length))
        case 416:
            stream.cancel()
            // S3 does not say the size with a 416; RFC 9110 §15.5.17 wants it in Content-Range.
            guard let info = try remote.info(key) else { throw BlobStoreError.notFound(key.rawValue) }
            var headers = fixed
            headers["Content-Range"] = "bytes */\(info.size)"
            return BucketRoutes.respond(
                request, response: HTTPResponse(status: .rangeNotSatisfiable, headers: headers), errors: errors)
        default:
            stream.cancel()
            throw BlobStoreError.remote(
                operation: "get", key: key.rawValue, status: answer.status, code: "Unexpected", message: "")
        }
    }

    /// A conditional request: decided from a HEAD like a local file, then the chosen bytes
    /// streamed by a GET pinned to the ETag the decision was made on.
    private func respondConditionally(
        _ request: HTTPRequest, key: BlobKey, method: String, contentType: String, headers fixed: HTTPHeaders,
        errors: S3ErrorResponder
    ) throws -> HTTPResponse {
        guard let info = try remote.info(key) else { throw BlobStoreError.notFound(key.rawValue) }
        let file = HTTPFileResponse.File(
            path: key.rawValue, size: Int(info.size), etag: info.etag, lastModified: info.modified,
            contentType: contentType)
        var response = BucketRoutes.respond(request, file: file, headers: fixed, errors: errors)
        guard case .file(_, let offset, let length) = response.body else { return response }
        if method == "HEAD" || length == 0 {
            response.body = .stream(HTTPBodyStream(), length: length)
            return response
        }
        var forwarded = [("if-match", info.etag)]
        if offset != 0 || length != file.size { forwarded.append(("range", "bytes=\(offset)-\(offset + length - 1)")) }
        let (answer, stream) = try start(key, method: method, headers: forwarded)
        guard (200..<300).contains(answer.status), (try? Self.contentLength(answer, key: key)) == length else {
            // Replaced between the HEAD and the GET (412), or an answer that does not fit: a retry gets it right.
            stream.cancel()
            throw BlobStoreError.remote(
                operation: "get", key: key.rawValue, status: answer.status, code: "ObjectChanged",
                message: "the object changed while it was read")
        }
        response.body = .stream(stream, length: length)
        return response
    }

    /// Starts a download on its own pump thread and waits for the store's answer head. Returns it
    /// with the stream its body goes into (finished at once for an answer without a body; a HEAD is
    /// asked on the caller's thread).
    private func start(_ key: BlobKey, method: String, headers: [(String, String)]) throws -> (
        S3HTTPResponse, HTTPBodyStream
    ) {
        if method == "HEAD" {
            // No body to pump: asked here, on the handler's thread, without taking a stream.
            let answer = try remote.client.streamObject(
                key.rawValue, method: method, headers: headers, head: { _ in }, sink: { _ in })
            return (answer, HTTPBodyStream())
        }
        let admitted = active.withLock { active in
            guard active < maxStreams else { return false }
            active += 1
            return true
        }
        guard admitted else {
            logger.warning("asset_proxy_streams (\(maxStreams)) reached: answering 503")
            throw HTTPError(
                .serviceUnavailable, "Too many downloads in progress. Please reduce your request rate.",
                headers: ["Retry-After": "1"])
        }
        let stream = HTTPBodyStream(capacity: bufferBytes)
        let handoff = HeadHandoff()
        let remote = self.remote
        let logger = self.logger
        let thread = Thread { [self] in
            defer { pumpEnded() }
            var first: S3HTTPResponse?
            do {
                let answer = try remote.client.streamObject(
                    key.rawValue, method: method, headers: headers,
                    head: { head in
                        if let first {
                            // The store was asked again after a failure before any body byte: it must be the same object.
                            guard head.header("etag") == first.header("etag"),
                                head.header("content-length") == first.header("content-length")
                            else {
                                throw BlobStoreError.remote(
                                    operation: "get", key: key.rawValue, status: head.status, code: "ObjectChanged",
                                    message: "the object changed between attempts")
                            }
                            return
                        }
                        first = head
                        handoff.deliver(.success(head))
                    },
                    sink: { chunk in
                        self.counted(chunk.count)
                        try stream.write(chunk)
                    })
                if first == nil { handoff.deliver(.success(answer)) }
                stream.finish()
            } catch {
                if !handoff.deliver(.failure(error)) {
                    if !(error is HTTPBodyStream.Cancelled) {
                        logger.error(
                            "object store failed mid-body", metadata: ["key": "\(key.rawValue)", "error": "\(error)"])
                    }
                    stream.fail("\(error)")
                }
            }
        }
        thread.name = "galleryd-s3-proxy"
        thread.stackSize = 256 * 1024
        thread.start()
        do {
            return (try handoff.wait(), stream)
        } catch {
            stream.cancel()
            throw error
        }
    }

    private func counted(_ bytes: Int) {
        fromStore.add(Int64(bytes), ordering: .relaxed)
    }

    private func pumpEnded() {
        active.withLock { $0 -= 1 }
    }

    private static func contentLength(_ answer: S3HTTPResponse, key: BlobKey) throws -> Int {
        guard let text = answer.header("content-length"), let length = Int(text), length >= 0 else {
            throw BlobStoreError.remote(
                operation: "get", key: key.rawValue, status: answer.status, code: "MalformedAnswer",
                message: "no Content-Length")
        }
        return length
    }

    /// The store's answer head, passed from the pump thread to the handler waiting for it.
    private final class HeadHandoff: Sendable {
        private let semaphore = DispatchSemaphore(value: 0)
        private let result = Mutex<Result<S3HTTPResponse, any Error>?>(nil)

        /// Hands over the head or the failure; false when one was handed over already.
        @discardableResult
        func deliver(_ outcome: Result<S3HTTPResponse, Error>) -> Bool {
            let first = result.withLock { result in
                guard result == nil else { return false }
                result = outcome
                return true
            }
            if first { semaphore.signal() }
            return first
        }

        func wait() throws -> S3HTTPResponse {
            semaphore.wait()
            return try result.withLock { $0! }.get()
        }
    }
}
