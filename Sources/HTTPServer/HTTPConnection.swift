import Foundation
import Logging

/// One client connection, as the driver of its `HTTPConnectionStateMachine`: it performs the machine's actions (reads,
/// parses, routes and admits requests, runs their handlers inline or on the handler pool, writes their responses) and
/// reports what each one did. Lives on one event loop thread and is only touched there. What it writes is
/// `HTTPResponseWriter`'s, the format of its errors `HTTPErrorResponderChoice`'s; lingering close and the WebSocket
/// hand-off are in `HTTPConnection+Lingering` and `HTTPConnection+Upgrade`, the writing of responses in
/// `HTTPConnection+Response`, the errors it answers itself in `HTTPConnection+ServerErrors`.
final class HTTPConnection {
    /// The machine's next step.
    typealias Action = HTTPConnectionStateMachine.Action

    /// The connected socket.
    let fd: Int32
    /// The loop that owns this connection; every method runs on its thread. Strong: a `let` is read
    /// without the retain and release each use of an `unowned(unsafe)` one cost (decision 041, round
    /// 9). The cycle with the loop's table ends at `close()`, which the loop's `finish()` runs on all.
    let loop: EventLoop
    /// What the loops share: configuration, router, pool, logger, observers.
    let server: HTTPServerCore
    /// `server.router`, held here: read through `server` it was retained and released per request.
    let router: HTTPRouter
    /// The peer as text, for logs and `HTTPRequest.remoteAddress`.
    let remoteAddress: String
    /// The access log buffer of this connection's loop, nil with the log off: looked up once.
    let accessLog: HTTPAccessLogBuffer?

    /// Bytes read and not yet parsed.
    let buffer = ByteBuffer()
    /// The RFC 9112 parser over `buffer`.
    var parser: HTTPRequestParser
    /// The state, its flags and the deadline.
    var machine: HTTPConnectionStateMachine

    // The exchange in progress.
    /// The request being read, handled or answered.
    var request: HTTPRequest?
    /// The last finished request, emptied, whose box the next head refills (`HTTPRequest.refill`).
    var finishedRequest: HTTPRequest?
    /// The route the request matched, not counted: the router (read-only while serving, held by the
    /// server, which the connection holds) keeps every route, so storing it, clearing it and testing
    /// it (`hasRoute`) need no retain and release (decision 041, round 9).
    var route: HTTPRoute? {
        get { matchedRoute?.takeUnretainedValue() }
        set { matchedRoute = newValue.map { Unmanaged.passUnretained($0) } }
    }
    private var matchedRoute: Unmanaged<HTTPRoute>?
    /// Whether a route matched the request in progress.
    var hasRoute: Bool { matchedRoute != nil }
    /// Which error responder answers for the request's URL space.
    var responders: HTTPErrorResponderChoice
    /// Where the body being read goes (memory, then a temporary file).
    var sink: RequestBodySink?
    /// When the request's head arrived, for its duration.
    var requestStart: UInt64 = 0
    /// The WebSocket this connection became after an upgrade.
    var webSocket: WebSocketConnection?

    // The response being written.
    /// Writes the response's head and body.
    var writer = HTTPResponseWriter()
    /// The response's status, for the log and metrics.
    var responseStatus = 0

    /// Wraps an accepted, non-blocking socket.
    init(fd: Int32, loop: EventLoop, server: HTTPServerCore, remoteAddress: String) {
        self.fd = fd
        self.loop = loop
        self.server = server
        self.router = server.router
        self.remoteAddress = remoteAddress
        self.accessLog = server.accessLog.map { $0.buffers[loop.index % $0.buffers.count] }
        self.parser = HTTPRequestParser(limits: server.configuration.limits)
        self.responders = HTTPErrorResponderChoice(router: server.router)
        self.machine = HTTPConnectionStateMachine(
            limits: server.configuration.limits, timeouts: server.configuration.timeouts,
            shortReadDrainsSocket: loop.shortReadDrainsSocket, now: loop.now)
    }

    /// Monotonic nanoseconds after which `timedOut()` runs; 0 for none.
    var deadline: UInt64 { machine.deadline }

    /// Whether the connection waits for a request and has none of it: shutdown closes these at once.
    /// An upgraded connection counts as idle: draining closes it (with 1001) rather than wait for it.
    var isIdle: Bool { machine.isIdle(requestStarted: requestStarted) }

    /// Whether bytes of a request are buffered or the parser is inside one.
    private var requestStarted: Bool { buffer.readableCount > 0 || !parser.isIdle }

    /// Whether the connection is still open.
    var isOpen: Bool { machine.isOpen }

    /// Whether the connection reads now: waiting for a request, reading a body, or lingering.
    var wantsRead: Bool { machine.state == .upgraded ? webSocket?.wantsRead ?? false : machine.wantsRead }

    /// Whether a response write stopped on a full send buffer and waits for room.
    var wantsWrite: Bool { machine.state == .upgraded ? webSocket?.wantsWrite == true : machine.wantsWrite }

    /// Called with what the reactor saw on the socket.
    func handle(events: ReactorEvents) {
        machine.socketEvents(readable: events.contains(.readable), hangUp: events.contains(.hangUp))
        drive()
    }

    /// Runs the state machine until it must wait for the socket or a handler.
    func drive() { run(machine.resume()) }

    /// Performs `action` and the ones that follow from it until one says to wait.
    func run(_ action: Action) {
        var action = action
        while true {
            switch action {
            case .wait:
                return
            case .parse:
                action = parseStep()
            case .read(let minimum):
                action = read(minimum: minimum)
            case .sendContinue:
                action = sendContinue()
            case .dispatch:
                dispatch()
                action = machine.resume()
            case .flush:
                action = flush()
            case .finishExchange:
                action = finishExchange()
            case .abortExchange:
                return abortExchange()
            case .startLingering:
                action = startLingering()
            case .discardInput:
                action = discardInput()
            case .driveWebSocket:
                webSocket?.drive()
                action = webSocketProgressed()
            case .timeOutWebSocket:
                webSocket?.timedOut()
                action = webSocketProgressed()
            case .respondTimeout(let cause):
                respondTimeout(cause)
                return close()
            case .resetStalledWrite(let belowMinimumRate):
                return resetStalledWrite(belowMinimumRate: belowMinimumRate)
            case .close(let reason):
                if reason == .peerClosedMidRequest {
                    server.logger.notice("client closed mid-request", metadata: ["peer": "\(remoteAddress)"])
                }
                return close()
            }
        }
    }

    // MARK: - Reading

    private func read(minimum: Int) -> Action {
        let space = buffer.writableSpace(minimum: minimum)
        let n = recv(fd, space.baseAddress, space.count, 0)
        if n > 0 {
            buffer.didWrite(n)
            return machine.bytesRead(n, room: space.count, now: loop.now)
        }
        if n == 0 { return machine.readEnded() }
        switch errno {
        case EAGAIN, EWOULDBLOCK: return machine.readWouldBlock()
        case EINTR: return .parse
        default: return machine.readFailed()
        }
    }

    /// One parser step over the buffered bytes.
    private func parseStep() -> Action {
        let input = buffer.readable
        let step: HTTPRequestParser.Step
        let consumed: Int
        do {
            (step, consumed) = try parser.step(input)
        } catch {
            parseFailed(error as? HTTPParseError ?? .invalidRequestLine)
            return machine.resume()
        }
        // The step holds numbers only: the head is read from the parser (decision 041, round 7).
        switch step {
        case .nothing:
            if consumed > 0 {
                buffer.consume(consumed)
                return .parse
            }
            return machine.parserNeedsInput(requestStarted: requestStarted)
        case .head:
            buffer.consume(consumed)
            return headReceived()
        case .body(let range):
            do {
                try sink?.append(UnsafeRawBufferPointer(rebasing: input[range]))
                buffer.consume(consumed)
            } catch {
                buffer.consume(consumed)
                machine.requestFailed(unreadBody: true)
                sink?.discard()
                sink = nil
                respondWithError(error)
            }
            return machine.resume()
        case .end:
            buffer.consume(consumed)
            return bodyComplete(trailers: parser.takeTrailers())
        }
    }

    /// Routes a parsed head, admits its body or answers it at once.
    /// The head is read in place from the parser (`parser.head`), not copied (decision 041, round 7).
    private func headReceived() -> Action {
        requestStart = loop.now
        let hasBody = parser.head.hasBody
        let id = loop.requestIDs.next()
        guard let (path, query) = parser.withHead({ HTTPRequest.splitTarget($0.target) }) else {
            request = HTTPRequest(
                method: parser.head.method, target: "/", version: parser.head.version, remoteAddress: remoteAddress,
                requestID: id)
            request!.routePattern = "unmatched"
            responders.choose(forUndecodable: parser.head.target)
            parseFailed(.invalidTarget)
            return machine.resume()
        }
        // Matched before the request is made, which then takes the path and the head's method and
        // target without copying them (decision 041, round 9).
        let match = parser.withHead { router.match(method: $0.method, path: path) }
        var request = newRequest(path: path, query: query, requestID: id)
        machine.headReceived(keepAlive: parser.head.keepAlive, expectContinue: parser.head.expectContinue)
        switch consume match {
        case .route(let route, let parameters):
            // A new or refilled request has none: a route without parameters leaves them alone.
            if parameters.count > 0 { request.pathParameters = parameters }
            request.routePattern = route.pattern
            self.route = route
            if route.webSocket != nil, WebSocketHandshake.isUpgrade(parser.head.headers) {
                self.request = request
                return upgrade(request, route: route, hasBody: hasBody)
            }
            var admitted: HTTPBodyObserver?
            if let admission = route.admission {
                do {
                    admitted = try admission(request)
                } catch {
                    // Refused on the head alone (keys, disk space): answered now, the body never stored.
                    self.request = request
                    refuseBeforeBody(error, hasUnreadBody: hasBody)
                    return machine.resume()
                }
            }
            let limit = admitted?.maxBodyBytes ?? route.maxBodyBytes ?? server.configuration.limits.maxBodyBytes
            if let length = parser.head.contentLength, length > limit {
                // Refused before reading it (and without 100 Continue); the unread body forces a close.
                self.request = request
                server.logger.notice(
                    "request body too large",
                    metadata: ["request": "\(request.requestID)", "length": "\(length)", "limit": "\(limit)"])
                respondServerError(.contentTooLarge, "request body too large", hasUnreadBody: true)
                return machine.resume()
            }
            parser.bodyLimit = limit
            if hasBody {
                let observer = admitted ?? route.bodyObserverFactory?()
                request.bodyObserver = observer
                do {
                    sink = try RequestBodySink(
                        expectedLength: parser.head.contentLength,
                        threshold: server.configuration.limits.inMemoryBodyThreshold,
                        directory: server.configuration.temporaryDirectory, observer: observer)
                } catch {
                    self.request = request
                    machine.requestFailed(unreadBody: true)
                    respondWithError(error)
                    return machine.resume()
                }
            }
            // Moved, not copied: the local is not used after (a retain here and its release at the end).
            self.request = consume request
            return machine.bodyWanted(hasBody: hasBody, buffered: buffer.readableCount, now: loop.now)
        case .methodNotAllowed(let allow):
            request.routePattern = "unmatched"  // a refilled request holds the last one's (round 10)
            self.request = request
            respondServerError(
                .methodNotAllowed, "method not allowed", headers: ["Allow": allow], hasUnreadBody: hasBody)
        case .options(let allow):
            request.routePattern = "unmatched"
            self.request = request
            var response = HTTPResponse(status: .noContent)
            response.headers["Allow"] = allow
            machine.answeredBeforeBody(unreadBody: hasBody)
            if !hasBody { parser.discardEmptyBody() }
            startResponse(response)
        case .notFound:
            request.routePattern = "unmatched"
            self.request = request
            respondServerError(.notFound, "not found", hasUnreadBody: hasBody)
        }
        return machine.resume()
    }

    /// The request for a parsed head: the previous request's box refilled when nothing else holds it (no
    /// allocation per keep-alive request), else a new one. A refilled box takes the head's method and target
    /// (`HTTPRequest.refill(takingRequestLineOf:…)`; `parser.head`'s are stale after), not a route pattern.
    private func newRequest(path: consuming String, query: consuming String?, requestID: consuming String)
        -> HTTPRequest
    {
        if var reused = finishedRequest {
            finishedRequest = nil
            if reused.isUnshared() {
                reused.refill(takingRequestLineOf: &parser, path: path, query: query, requestID: requestID)
                return reused
            }
        }
        return HTTPRequest(
            head: parser.head, path: path, query: query, remoteAddress: remoteAddress, requestID: requestID)
    }

    /// RFC 9110 §10.1.1: the route wants the body the client holds back for our answer.
    private func sendContinue() -> Action {
        let line = "HTTP/1.1 100 Continue\r\n\r\n"
        let sent = line.utf8.withContiguousStorageIfAvailable { SystemCalls.send(fd, $0.baseAddress, $0.count) } ?? -1
        return machine.continueSent(completely: sent == line.utf8.count)
    }

    private func bodyComplete(trailers: HTTPHeaders) -> Action {
        guard self.request != nil, hasRoute else { return machine.resume() }
        // Changed in place: a copy here would make the request's storage shared and the write copy it.
        if trailers.count > 0 { self.request!.trailers = trailers }
        do {
            if let body = try sink?.finish() { self.request!.body = body }
        } catch {
            sink = nil
            machine.requestFailed(unreadBody: false)
            respondWithError(error)
            return machine.resume()
        }
        sink = nil
        return machine.bodyComplete()
    }

    /// Runs the complete request's handler: answered from memory on the loop, on the loop, or on
    /// the handler pool (then `handlerFinished` carries on).
    private func dispatch() {
        guard let request, let matchedRoute else { return }
        // Lent without a retain: the router keeps the route alive (see `route`).
        matchedRoute._withUnsafeGuaranteedRef { dispatch(request, to: $0) }
    }

    private func dispatch(_ request: HTTPRequest, to route: HTTPRoute) {
        // Chosen from the path only if the handler fails (nil): most requests never need it.
        let responder = responders.chosenBox
        if route.mayBlock, let inline = route.inlineAnswer, var response = inline(request) {
            // Answered from memory on the loop (HTTPRoute.inlineAnswer): no hop to the pool.
            if HTTPResponseEncoder.mayCompress(response) {
                HTTPResponseEncoder.applyContentCoding(&response, requestHeaders: request.headers)
            }
            startResponse(consume response, for: request)
        } else if route.mayBlock {
            let server = self.server
            let loop = self.loop
            server.pool.submit { [self] in
                var response = server.run(route, request, responder)
                HTTPResponseEncoder.applyContentCoding(&response, requestHeaders: request.headers)
                loop.execute { self.handlerFinished(response, request: request) }
            }
        } else {
            var response = server.run(route, request, responder)
            // The request's fields are read (a reference count) only for a body that may be compressed.
            if HTTPResponseEncoder.mayCompress(response) {
                HTTPResponseEncoder.applyContentCoding(&response, requestHeaders: request.headers)
            }
            startResponse(consume response, for: request)
        }
    }

    // MARK: - Timeouts and closing

    /// The deadline passed: the machine says what that means in the state the connection is in.
    func timedOut() { run(machine.timerFired(requestStarted: requestStarted)) }

    /// Closes the socket and forgets the connection. Safe to call twice.
    func close() {
        guard machine.isOpen else { return }
        let previous = machine.closed()
        if previous == .upgraded { webSocket?.abandon() }
        webSocket = nil
        sink?.discard()
        sink = nil
        writer.closeFile()
        writer.cancelStream()
        // A running handler still owns the request's temporary file; handlerFinished removes it.
        if previous != .handling, let request, case .file(let path, _) = request.body { unlink(path) }
        request = nil
        loop.closeSocket(fd)
        loop.connectionClosed(self)
    }
}
