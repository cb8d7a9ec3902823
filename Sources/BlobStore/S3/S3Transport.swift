/// Sends one signed HTTP request to the object store and reads the answer: the seam between the S3
/// logic (signing, retries, XML) and the HTTP client. Implementations: `S3SocketTransport` (our own
/// blocking client on plain sockets, `http:` only, the default where it applies) and
/// `S3URLSessionTransport` (FoundationNetworking, for `https:`). See docs/architecture.md.
public protocol S3Transport: Sendable {
    /// Sends `request` (already carrying `host` and signature headers in `headers`, path and query
    /// already percent-encoded in `target`) and passes each chunk of a 2xx body to `sink` as it
    /// arrives. Throws `S3TransportError` when the exchange fails before a complete answer.
    func send(
        method: String, target: String, headers: [(String, String)], body: S3HTTPRequest.Body,
        sink: (UnsafeRawBufferPointer) throws -> Void
    ) throws -> S3HTTPResponse
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
