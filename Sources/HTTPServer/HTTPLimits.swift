/// Size limits for requests, in one place (like SwiftNIO's `NIOHTTPDecoderLimitConfiguration`).
/// Every limit has a safe default and a reason; past one the server answers with the listed status.
public struct HTTPLimits: Sendable {
    /// Longest request line (method, target, version) → 414. 8 KiB fits any sane URL with a long
    /// Parse `where=` query while stopping a client from making us buffer an endless line.
    public var requestLineBytes: Int = 8 * 1024
    /// Largest header section after the request line → 431. 32 KiB holds big cookies and tokens.
    public var headerBytes: Int = 32 * 1024
    /// Most header fields → 431. Real clients send a dozen; each field costs an allocation.
    public var headerCount: Int = 100
    /// Default largest body a route accepts → 413 (override per route with `HTTPRoute.maxBodyBytes`).
    /// 1 MiB is plenty for JSON; upload routes raise it.
    public var maxBodyBytes: Int = 1024 * 1024
    /// Bodies up to this size stay in memory, larger ones stream to a temporary file,
    /// so an upload never sits whole in memory.
    public var inMemoryBodyThreshold: Int = 64 * 1024
    /// Longest chunk-size line including extensions (RFC 9112 §7.1.1) → 400. Extensions are
    /// ignored; the limit stops a client from hiding an endless line in them.
    public var chunkLineBytes: Int = 4 * 1024
    /// Most bytes a lingering close discards after an error response (413, 431, 403 …) before it
    /// gives up and closes. 64 MiB lets a phone finish sending a refused photo, so it reads the
    /// answer instead of a reset, while bounding what one refused client can make us read.
    public var maxLingerBytes: Int = 64 * 1024 * 1024

    /// The defaults.
    public init() {}
}
