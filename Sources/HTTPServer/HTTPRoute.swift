/// One route: a method, a path pattern and how its requests are handled. A class, because the
/// router hands the same route to every request that matches it.
public final class HTTPRoute: Sendable {
    /// The method this route answers. `HEAD` is answered by `GET` routes automatically.
    public let method: HTTPMethod
    /// A path pattern: literal segments, `:name` parameters, and a final `*name` that captures the rest
    /// (e.g. `/parse/classes/:className/:objectId`, `/bucket/*key`).
    public let pattern: String
    /// The handler.
    public let handler: HTTPHandler
    /// The largest request body this route accepts, in bytes; nil uses the server's default. Larger → 413.
    public let maxBodyBytes: Int?
    /// Whether the handler may block (database, disk). Non-blocking handlers run inline on the
    /// connection's queue, which saves a thread hop for cheap routes like `/health`.
    public let mayBlock: Bool
    /// Makes a fresh observer for each request's body (e.g. an upload digest), or nil.
    public let bodyObserverFactory: (@Sendable () -> HTTPBodyObserver)?
    /// Runs on the event loop with the request head, before any of the body is read or spooled; an
    /// error refuses the request at once (rendered by the URL space's responder, the unread body
    /// discarded by a lingering close). For checks that must not cost an upload: keys, quotas.
    /// Must not block.
    public let headCheck: (@Sendable (HTTPRequest) throws -> Void)?

    public init(
        _ method: HTTPMethod, _ pattern: String, maxBodyBytes: Int? = nil, mayBlock: Bool = true,
        bodyObserverFactory: (@Sendable () -> HTTPBodyObserver)? = nil,
        headCheck: (@Sendable (HTTPRequest) throws -> Void)? = nil, handler: HTTPHandler
    ) {
        self.headCheck = headCheck
        self.method = method
        self.pattern = pattern
        self.handler = handler
        self.maxBodyBytes = maxBodyBytes
        self.mayBlock = mayBlock
        self.bodyObserverFactory = bodyObserverFactory
    }

    public convenience init(
        _ method: HTTPMethod, _ pattern: String, maxBodyBytes: Int? = nil, mayBlock: Bool = true,
        bodyObserverFactory: (@Sendable () -> HTTPBodyObserver)? = nil,
        headCheck: (@Sendable (HTTPRequest) throws -> Void)? = nil,
        _ body: @escaping @Sendable (HTTPRequest) throws -> HTTPResponse
    ) {
        self.init(
            method, pattern, maxBodyBytes: maxBodyBytes, mayBlock: mayBlock,
            bodyObserverFactory: bodyObserverFactory, headCheck: headCheck, handler: HTTPClosureHandler(body))
    }
}
