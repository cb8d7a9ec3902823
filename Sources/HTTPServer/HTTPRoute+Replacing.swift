extension HTTPRoute {
    /// This route with some of its parts replaced (the rest kept), for middleware that wraps them.
    public func replacing(
        handler: (any HTTPHandler)? = nil, mayBlock: Bool? = nil,
        admission: (@Sendable (HTTPRequest) throws -> HTTPBodyObserver?)?? = nil,
        inlineAnswer: (@Sendable (HTTPRequest) -> HTTPResponse?)?? = nil
    ) -> HTTPRoute {
        HTTPRoute(
            method, pattern, maxBodyBytes: maxBodyBytes, mayBlock: mayBlock ?? self.mayBlock,
            bodyObserverFactory: bodyObserverFactory, admission: admission ?? self.admission, webSocket: webSocket,
            webSocketLimits: webSocketLimits, inlineAnswer: inlineAnswer ?? self.inlineAnswer,
            handler: handler ?? self.handler)
    }
}
