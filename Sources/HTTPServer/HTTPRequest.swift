import Foundation

/// A parsed request as handlers see it: head fields, the matched route's parameters and the body.
public struct HTTPRequest: Sendable {
    /// The request method.
    public var method: HTTPMethod
    /// The request-target exactly as received (origin-form: path and optional query).
    public var target: String
    /// The percent-decoded path, without the query.
    public var path: String
    /// The raw query string after `?` (not decoded), or nil when absent.
    public var query: String?
    /// The protocol version from the request line.
    public var version: HTTPVersion
    /// The header fields in order.
    public var headers: HTTPHeaders
    /// The request body: nothing, bytes in memory, or a temporary file for large bodies.
    public var body: HTTPRequestBody
    /// Values captured by `:name` segments of the matched route pattern.
    public var pathParameters: [String: String]
    /// The pattern of the route that matched (e.g. `/parse/classes/:className`), for logs and metrics.
    public var routePattern: String
    /// A short unique id, logged with the request and returned as `X-Request-Id`.
    public var requestID: String
    /// The peer address as text (`127.0.0.1:53122`, `[::1]:53122`).
    public var remoteAddress: String
    /// What the route's body observer saw while the body streamed in (for example a digest), if it had one.
    public var bodyObserver: HTTPBodyObserver?
    /// Trailer fields sent after a chunked body (RFC 9112 §7.1.2); empty otherwise.
    public var trailers = HTTPHeaders()

    /// A request; the server fills every field, tests may build one by hand.
    public init(
        method: HTTPMethod, target: String, version: HTTPVersion = .http11, headers: HTTPHeaders = HTTPHeaders(),
        body: HTTPRequestBody = .empty, remoteAddress: String = "", requestID: String = ""
    ) {
        self.method = method
        self.target = target
        let split = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        let rawPath = split.first.map(String.init) ?? target
        self.path = rawPath.removingPercentEncoding ?? rawPath
        self.query = split.count > 1 ? String(split[1]) : nil
        self.version = version
        self.headers = headers
        self.body = body
        self.pathParameters = [:]
        self.routePattern = ""
        self.requestID = requestID
        self.remoteAddress = remoteAddress
        self.bodyObserver = nil
    }

    /// A request from a parsed head whose target was already split and decoded (the server's fast path).
    init(
        head: HTTPRequestHead, path: String, query: String?, remoteAddress: String, requestID: String
    ) {
        self.method = head.method
        self.target = head.target
        self.path = path
        self.query = query
        self.version = head.version
        self.headers = head.headers
        self.body = .empty
        self.pathParameters = [:]
        self.routePattern = "unmatched"
        self.requestID = requestID
        self.remoteAddress = remoteAddress
        self.bodyObserver = nil
    }

    /// Splits a request-target into a percent-decoded path and the raw query (RFC 9112 §3.2).
    /// Accepts origin-form (`/path?query`) and absolute-form (`http://host/path`, which a server
    /// MUST accept, §3.2.2); nil for anything else or for invalid percent-encoding.
    static func splitTarget(_ target: String) -> (path: String, query: String?)? {
        var rest = Substring(target)
        if rest.first != "/" {
            let lower = rest.prefix(8).lowercased()
            let schemeLength = lower.hasPrefix("http://") ? 7 : lower.hasPrefix("https://") ? 8 : 0
            guard schemeLength > 0 else { return nil }
            rest = rest.dropFirst(schemeLength)
            guard !rest.isEmpty else { return nil }
            if let slash = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) {
                rest = rest[slash...]
                if rest.first == "?" { rest = "/" + rest }
            } else {
                rest = "/"
            }
        }
        if rest.utf8.contains(UInt8(ascii: "#")) { return nil }
        var rawPath = rest
        var query: String?
        if let mark = rest.utf8.firstIndex(of: UInt8(ascii: "?")) {
            rawPath = rest[..<mark]
            query = String(rest[rest.index(after: mark)...])
        }
        if rawPath.utf8.contains(UInt8(ascii: "%")) {
            guard let decoded = rawPath.removingPercentEncoding else { return nil }
            return (decoded, query)
        }
        return (String(rawPath), query)
    }

    /// The query as decoded name/value pairs in order (`+` is a space, as in HTML forms).
    /// Returns nil when a pair is not valid percent-encoding.
    public func queryItems() -> [(name: String, value: String)]? {
        guard let query, !query.isEmpty else { return [] }
        var items: [(name: String, value: String)] = []
        for pair in query.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ s: Substring) -> String? {
                s.replacingOccurrences(of: "+", with: " ").removingPercentEncoding
            }
            guard let name = decode(parts[0]) else { return nil }
            let value = parts.count > 1 ? decode(parts[1]) : ""
            guard let value else { return nil }
            items.append((name: name, value: value))
        }
        return items
    }

    /// Whether the connection stays open after this request (RFC 9112 §9.3).
    public var keepAlive: Bool {
        if headers.containsToken("close", in: "Connection") { return false }
        if version == .http10 { return headers.containsToken("keep-alive", in: "Connection") }
        return true
    }
}

/// A request body as handed to a handler.
public enum HTTPRequestBody: Sendable {
    /// No body (or a zero-length one).
    case empty
    /// A small body, held in memory.
    case bytes([UInt8])
    /// A body larger than the in-memory threshold, streamed to a temporary file.
    /// The server deletes the file after the response unless the handler moved it away.
    case file(path: String, length: Int)

    /// The body's length in bytes.
    public var count: Int {
        switch self {
        case .empty: return 0
        case .bytes(let b): return b.count
        case .file(_, let length): return length
        }
    }

    /// The whole body in memory. For `.file` this reads the file; use only where the route's
    /// body limit keeps it small (JSON bodies).
    public func data() throws -> Data {
        switch self {
        case .empty: return Data()
        case .bytes(let b): return Data(b)
        case .file(let path, _): return try Data(contentsOf: URL(fileURLWithPath: path))
        }
    }
}

/// Sees the request body chunk by chunk as it arrives, before any handler runs,
/// so an upload can be hashed while it streams to disk. One instance per request.
public protocol HTTPBodyObserver: AnyObject, Sendable {
    /// Called with each chunk of the decoded body, in order.
    func consume(_ chunk: UnsafeRawBufferPointer)
}
