/// One route: a method, a path pattern and how its requests are handled.
public struct HTTPRoute: Sendable {
    /// The method this route answers. `HEAD` is answered by `GET` routes automatically.
    public var method: HTTPMethod
    /// A path pattern: literal segments, `:name` parameters, and a final `*name` that captures the rest
    /// (e.g. `/parse/classes/:className/:objectId`, `/bucket/*key`).
    public var pattern: String
    /// The handler.
    public var handler: HTTPHandler
    /// The largest request body this route accepts, in bytes; nil uses the server's default. Larger → 413.
    public var maxBodyBytes: Int?
    /// Whether the handler may block (database, disk). Non-blocking handlers run inline on the
    /// connection's queue, which saves a thread hop for cheap routes like `/health`.
    public var mayBlock: Bool
    /// Makes a fresh observer for each request's body (e.g. an upload digest), or nil.
    public var bodyObserverFactory: (@Sendable () -> HTTPBodyObserver)?

    public init(
        _ method: HTTPMethod, _ pattern: String, maxBodyBytes: Int? = nil, mayBlock: Bool = true,
        bodyObserverFactory: (@Sendable () -> HTTPBodyObserver)? = nil, handler: HTTPHandler
    ) {
        self.method = method
        self.pattern = pattern
        self.handler = handler
        self.maxBodyBytes = maxBodyBytes
        self.mayBlock = mayBlock
        self.bodyObserverFactory = bodyObserverFactory
    }

    public init(
        _ method: HTTPMethod, _ pattern: String, maxBodyBytes: Int? = nil, mayBlock: Bool = true,
        bodyObserverFactory: (@Sendable () -> HTTPBodyObserver)? = nil,
        _ body: @escaping @Sendable (HTTPRequest) throws -> HTTPResponse
    ) {
        self.init(
            method, pattern, maxBodyBytes: maxBodyBytes, mayBlock: mayBlock,
            bodyObserverFactory: bodyObserverFactory, handler: HTTPClosureHandler(body))
    }
}
