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
    /// Runs on the request head, before any of the body is read, spooled or invited with
    /// `100 Continue`: a thrown error (missing keys, a full disk) is answered at once by the route's
    /// error responder, and the body is never stored. It returns the body's observer (taking the
    /// place of `bodyObserverFactory`), which lives as long as the request and so can also hold a
    /// reservation released with it. Runs on an event loop thread: it must not block.
    public let admission: (@Sendable (HTTPRequest) throws -> HTTPBodyObserver?)?
    /// Accepts a WebSocket upgrade on this route (RFC 6455 §4.2): called on the event loop with
    /// the handshake request (it must not block); a thrown error is answered like a handler's, a
    /// handler returned takes the connection. Requests without `Upgrade: websocket` go to `handler`.
    public let webSocket: (@Sendable (HTTPRequest) throws -> WebSocketHandler)?
    /// The limits for connections upgraded on this route.
    public let webSocketLimits: WebSocketLimits
    /// For a route that may block: tried on the event loop before the request goes to the handler
    /// pool, for answers that cost no more than a lookup in memory (a 304 for an unchanged page, a
    /// body already rendered). A response it returns is sent at once, without the thread hop; nil
    /// sends the request on to `handler` as usual. It must not block or throw: anything it is
    /// unsure of (bad keys, an unknown session) is left to the handler.
    public let inlineAnswer: (@Sendable (HTTPRequest) -> HTTPResponse?)?

    public init(
        _ method: HTTPMethod, _ pattern: String, maxBodyBytes: Int? = nil, mayBlock: Bool = true,
        bodyObserverFactory: (@Sendable () -> HTTPBodyObserver)? = nil,
        admission: (@Sendable (HTTPRequest) throws -> HTTPBodyObserver?)? = nil,
        webSocket: (@Sendable (HTTPRequest) throws -> WebSocketHandler)? = nil,
        webSocketLimits: WebSocketLimits = WebSocketLimits(),
        inlineAnswer: (@Sendable (HTTPRequest) -> HTTPResponse?)? = nil, handler: HTTPHandler
    ) {
        self.method = method
        self.pattern = pattern
        self.handler = handler
        self.maxBodyBytes = maxBodyBytes
        self.mayBlock = mayBlock
        self.bodyObserverFactory = bodyObserverFactory
        self.admission = admission
        self.webSocket = webSocket
        self.webSocketLimits = webSocketLimits
        self.inlineAnswer = inlineAnswer
    }

    public convenience init(
        _ method: HTTPMethod, _ pattern: String, maxBodyBytes: Int? = nil, mayBlock: Bool = true,
        bodyObserverFactory: (@Sendable () -> HTTPBodyObserver)? = nil,
        admission: (@Sendable (HTTPRequest) throws -> HTTPBodyObserver?)? = nil,
        inlineAnswer: (@Sendable (HTTPRequest) -> HTTPResponse?)? = nil,
        _ body: @escaping @Sendable (HTTPRequest) throws -> HTTPResponse
    ) {
        self.init(
            method, pattern, maxBodyBytes: maxBodyBytes, mayBlock: mayBlock,
            bodyObserverFactory: bodyObserverFactory, admission: admission, inlineAnswer: inlineAnswer,
            handler: HTTPClosureHandler(body))
    }
}
