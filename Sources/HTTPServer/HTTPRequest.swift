import Foundation

/// A parsed request as handlers see it: head fields, the matched route's parameters and the body.
///
/// The fields live in one copy-on-write box: the server hands the request from the parser to the
/// router, the handler, the response writer and the access log, and each hand-over is then one
/// reference count instead of one per field.
public struct HTTPRequest: Sendable {
    // @unchecked: copy-on-write; mutated only while uniquely referenced, copied before any shared change.
    private final class Storage: @unchecked Sendable {
        var method: HTTPMethod
        var target: String
        var path: String
        var query: String?
        var version: HTTPVersion
        var headers: HTTPHeaders
        var body: HTTPRequestBody = .empty
        var pathParameters = HTTPPathParameters()
        var routePattern: String
        var requestID: String
        var remoteAddress: String
        var bodyObserver: HTTPBodyObserver?
        var trailers = HTTPHeaders()

        init(
            method: HTTPMethod, target: String, path: String, query: String?, version: HTTPVersion,
            headers: HTTPHeaders, routePattern: String, requestID: String, remoteAddress: String
        ) {
            self.method = method
            self.target = target
            self.path = path
            self.query = query
            self.version = version
            self.headers = headers
            self.routePattern = routePattern
            self.requestID = requestID
            self.remoteAddress = remoteAddress
        }

        func copy() -> Storage {
            let copy = Storage(
                method: method, target: target, path: path, query: query, version: version, headers: headers,
                routePattern: routePattern, requestID: requestID, remoteAddress: remoteAddress)
            copy.body = body
            copy.pathParameters = pathParameters
            copy.bodyObserver = bodyObserver
            copy.trailers = trailers
            return copy
        }
    }

    private var storage: Storage

    /// The box, made unique first, for a write: copies of this request never see it. Each field
    /// has its own accessors rather than one key-path subscript, so a read is a load (decision 041).
    private var unique: Storage {
        mutating get {
            if !isKnownUniquelyReferenced(&storage) { storage = storage.copy() }
            return storage
        }
    }

    /// The request method.
    public var method: HTTPMethod {
        get { storage.method }
        set { unique.method = newValue }
    }
    /// The request-target exactly as received (origin-form: path and optional query).
    public var target: String {
        get { storage.target }
        set { unique.target = newValue }
    }
    /// The percent-decoded path, without the query.
    public var path: String {
        get { storage.path }
        set { unique.path = newValue }
    }
    /// The raw query string after `?` (not decoded), or nil when absent.
    public var query: String? {
        get { storage.query }
        set { unique.query = newValue }
    }
    /// The protocol version from the request line.
    public var version: HTTPVersion {
        get { storage.version }
        set { unique.version = newValue }
    }
    /// The header fields in order.
    public var headers: HTTPHeaders {
        get { storage.headers }
        set { unique.headers = newValue }
    }
    /// The request body: nothing, bytes in memory, or a temporary file for large bodies.
    public var body: HTTPRequestBody {
        get { storage.body }
        set { unique.body = newValue }
    }
    /// Values captured by `:name` segments of the matched route pattern.
    public var pathParameters: HTTPPathParameters {
        get { storage.pathParameters }
        set { unique.pathParameters = newValue }
    }
    /// The pattern of the route that matched (e.g. `/parse/classes/:className`), for logs and metrics.
    public var routePattern: String {
        get { storage.routePattern }
        set { unique.routePattern = newValue }
    }
    /// A short unique id, logged with the request and returned as `X-Request-Id`.
    public var requestID: String {
        get { storage.requestID }
        set { unique.requestID = newValue }
    }
    /// The peer address as text (`127.0.0.1:53122`, `[::1]:53122`).
    public var remoteAddress: String {
        get { storage.remoteAddress }
        set { unique.remoteAddress = newValue }
    }
    /// What the route's body observer saw while the body streamed in (for example a digest), if it had one.
    public var bodyObserver: HTTPBodyObserver? {
        get { storage.bodyObserver }
        set { unique.bodyObserver = newValue }
    }
    /// Trailer fields sent after a chunked body (RFC 9112 §7.1.2); empty otherwise.
    public var trailers: HTTPHeaders {
        get { storage.trailers }
        set { unique.trailers = newValue }
    }

    /// A request; the server fills every field, tests may build one by hand.
    public init(
        method: HTTPMethod, target: String, version: HTTPVersion = .http11, headers: HTTPHeaders = HTTPHeaders(),
        body: HTTPRequestBody = .empty, remoteAddress: String = "", requestID: String = ""
    ) {
        let split = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        let rawPath = split.first.map(String.init) ?? target
        storage = Storage(
            method: method, target: target, path: rawPath.removingPercentEncoding ?? rawPath,
            query: split.count > 1 ? String(split[1]) : nil, version: version, headers: headers, routePattern: "",
            requestID: requestID, remoteAddress: remoteAddress)
        storage.body = body
    }

    /// A request from a parsed head whose target was already split and decoded (the server's fast path).
    init(
        head: HTTPRequestHead, path: String, query: String?, remoteAddress: String, requestID: String
    ) {
        storage = Storage(
            method: head.method, target: head.target, path: path, query: query, version: head.version,
            headers: head.headers, routePattern: "unmatched", requestID: requestID, remoteAddress: remoteAddress)
    }

    /// Refills this request from the next parsed head of the same connection, when no copy shares
    /// its box: a keep-alive connection then reuses one box for all its requests (decision 041).
    /// False, with nothing changed, when the box is shared (make a new request then).
    /// The head's parts are taken (moved in), not borrowed and copied.
    mutating func refill(
        method: consuming HTTPMethod, target: consuming String, version: HTTPVersion, headers: consuming HTTPHeaders,
        path: String, query: String?, requestID: String
    ) -> Bool {
        guard isKnownUniquelyReferenced(&storage) else { return false }
        storage.method = method
        storage.target = target
        storage.path = path
        storage.query = query
        storage.version = version
        storage.headers = headers
        storage.routePattern = "unmatched"
        storage.requestID = requestID
        return true
    }

    /// Lends the fields the record of an exchange reads (the metrics and the access log) in place:
    /// a read of a `var` of the box may alias a write, so a getter copies it (a retain and a
    /// release each); an `inout` cannot alias, so these are borrowed (decision 041, round 10). The
    /// body must not change them: they are `inout` only to be lent without a copy. `mutating`, so
    /// the box itself is borrowed from `self` too, not retained for the call.
    mutating func withExchangeFields<R>(
        _ body: (
            _ method: inout HTTPMethod, _ routePattern: inout String, _ path: inout String, _ requestID: inout String
        )
            -> R
    ) -> R {
        body(&storage.method, &storage.routePattern, &storage.path, &storage.requestID)
    }

    /// Whether no copy shares this request's box, so `refill(takingRequestLineOf:…)` may change it.
    mutating func isUnshared() -> Bool { isKnownUniquelyReferenced(&storage) }

    /// `refill` for the connection, once `isUnshared()` said so: the parser's method and target
    /// taken, not copied. They are swapped with the ones this box held (which the parser's next
    /// request line replaces), so neither is retained here nor released twice later; the other parts
    /// are moved in (decision 041, round 9). The route pattern is left as it was: the connection
    /// sets it from the match it made before the refill, every time (decision 041, round 10); a nil
    /// query is not stored over the nil `emptyForRefill` left (each store is a release call).
    mutating func refill(
        takingRequestLineOf parser: inout HTTPRequestParser, path: consuming String, query: consuming String?,
        requestID: consuming String
    ) {
        assert(isKnownUniquelyReferenced(&storage), "refill of a shared request box")
        parser.exchangeRequestLine(method: &storage.method, target: &storage.target)
        storage.path = path
        if query != nil || storage.query != nil { storage.query = query }
        storage.version = parser.head.version
        storage.headers = parser.head.headers
        storage.requestID = requestID
    }

    /// `refill` from a whole head.
    mutating func refill(head: HTTPRequestHead, path: String, query: String?, requestID: String) -> Bool {
        refill(
            method: head.method, target: head.target, version: head.version, headers: head.headers, path: path,
            query: query, requestID: requestID)
    }

    /// Empties a finished request for `refill`, when no copy shares its box: what only its exchange
    /// needed (body, observer, trailers, parameters) is let go of now rather than held by an idle
    /// connection, and the header list too, so the parser's copy of it is unique again. False when
    /// the box is shared (the request is then dropped, not kept).
    mutating func emptyForRefill() -> Bool {
        guard isKnownUniquelyReferenced(&storage) else { return false }
        storage.headers = HTTPHeaders()
        // Most requests have none of these: then nothing is replaced (and destroyed).
        if case .empty = storage.body {} else { storage.body = .empty }
        if storage.pathParameters.count > 0 { storage.pathParameters = HTTPPathParameters() }
        if storage.bodyObserver != nil { storage.bodyObserver = nil }
        if storage.trailers.count > 0 { storage.trailers = HTTPHeaders() }
        if storage.query != nil { storage.query = nil }
        return true
    }

    /// Splits a request-target into a percent-decoded path and the raw query (RFC 9112 §3.2).
    /// Accepts origin-form (`/path?query`) and absolute-form (`http://host/path`, which a server
    /// MUST accept, §3.2.2); nil for anything else or for invalid percent-encoding.
    static func splitTarget(_ target: String) -> (path: String, query: String?)? {
        // Origin-form, what every client but a proxy sends, is split from its bytes in one pass.
        switch target.utf8.withContiguousStorageIfAvailable({ splitOriginForm($0, target: target) }) {
        case .split(let path, let query): return (path, query)
        case .invalid: return nil
        case .notOriginForm, nil: break  // absolute-form (or bytes not contiguous): below
        }
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

    /// What `splitOriginForm` found.
    private enum OriginFormSplit {
        case split(path: String, query: String?)
        /// A fragment, or a path escape that is not valid percent-encoding.
        case invalid
        /// Does not start with `/`.
        case notOriginForm
    }

    /// An origin-form target (`/path?query`) from its bytes: one pass finds the query mark, a
    /// fragment and the path's escapes; the parts are cut from the bytes, and a plain path is the
    /// target itself. (A signed asset URL's query through Substring and Character calls cost 4 %
    /// of a bucket GET's CPU; docs/decisions/024-signed-asset-urls.md.)
    private static func splitOriginForm(_ bytes: UnsafeBufferPointer<UInt8>, target: String) -> OriginFormSplit {
        guard let base = bytes.baseAddress, bytes.first == UInt8(ascii: "/") else { return .notOriginForm }
        // Three `memchr`s (word at a time) rather than a switch on every byte (decision 041): a
        // fragment anywhere is invalid, the first `?` ends the path, an escape counts in the path only.
        let start = UnsafeRawPointer(base)
        if memchr(start, Int32(UInt8(ascii: "#")), bytes.count) != nil { return .invalid }
        let mark =
            memchr(start, Int32(UInt8(ascii: "?")), bytes.count).map { UnsafeRawPointer($0) - start } ?? bytes.count
        let escaped = mark > 0 && memchr(start, Int32(UInt8(ascii: "%")), mark) != nil
        if mark == bytes.count && !escaped { return .split(path: target, query: nil) }
        // '?' is ASCII, so both parts are whole UTF-8.
        let query =
            mark < bytes.count
            ? String(decoding: UnsafeBufferPointer(rebasing: bytes[(mark + 1)...]), as: UTF8.self) : nil
        let rawPath =
            mark < bytes.count ? String(decoding: UnsafeBufferPointer(rebasing: bytes[..<mark]), as: UTF8.self) : target
        guard escaped else { return .split(path: rawPath, query: query) }
        guard let decoded = rawPath.removingPercentEncoding else { return .invalid }
        return .split(path: decoded, query: query)
    }

    /// The query as decoded name/value pairs in order (`+` is a space, as in HTML forms).
    /// Returns nil when a pair is not valid percent-encoding.
    public func queryItems() -> [(name: String, value: String)]? {
        guard let query, !query.isEmpty else { return [] }
        return try? HTTPQueryString.decode(query)
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
    /// Called with each chunk of the decoded body, in order. Throwing refuses the rest of the body:
    /// the error is answered by the route's responder and the connection closes (lingering).
    func consume(_ chunk: UnsafeRawBufferPointer) throws

    /// The largest body this request may send, when its route's admission decided it from the head
    /// (it takes the place of the route's `maxBodyBytes`); nil keeps the route's.
    var maxBodyBytes: Int? { get }
}

extension HTTPBodyObserver {
    public var maxBodyBytes: Int? { nil }
}
