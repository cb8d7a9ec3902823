/// Sends one signed HTTP request to the object store and reads the answer: the seam between the S3
/// logic (signing, retries, XML) and the HTTP client. Implementations: `S3SocketTransport` (our own
/// blocking client on plain sockets, `http:` only, the default where it applies) and
/// `S3URLSessionTransport` (FoundationNetworking, for `https:`). See docs/decisions/025-s3-object-storage.md.
public protocol S3Transport: Sendable {
    /// Sends `request` (already carrying `host` and signature headers in `headers`, path and query
    /// already percent-encoded in `target`), passes the head of a 2xx answer to `head` before any
    /// of its body, and each chunk of that body to `sink` as it arrives. Throws `S3TransportError`
    /// when the exchange fails before a complete answer; an error thrown by `sink` ends the
    /// exchange and closes its connection (it is not reused with a body half read).
    func send(
        method: String, target: String, headers: [(String, String)], body: S3HTTPRequest.Body,
        head: (S3HTTPResponse) throws -> Void, sink: (UnsafeRawBufferPointer) throws -> Void
    ) throws -> S3HTTPResponse
}

extension S3Transport {
    /// `send` for callers that need no head before the body.
    public func send(
        method: String, target: String, headers: [(String, String)], body: S3HTTPRequest.Body,
        sink: (UnsafeRawBufferPointer) throws -> Void
    ) throws -> S3HTTPResponse {
        try send(method: method, target: target, headers: headers, body: body, head: { _ in }, sink: sink)
    }
}

/// Why an exchange with the object store failed below HTTP: always worth a retry.
public struct S3TransportError: Error, CustomStringConvertible, Sendable {
    /// What happened, with `strerror(errno)` where there was one.
    public let message: String
    /// Whether any byte of a 2xx body already went to the sink: such a failure cannot be retried
    /// transparently (the sink holds a partial body).
    public let bodyStarted: Bool

    /// An error.
    public init(_ message: String, bodyStarted: Bool = false) {
        self.message = message
        self.bodyStarted = bodyStarted
    }

    public var description: String { message }
}
