import Foundation
import Logging

/// One client connection: reads and parses requests, routes them and admits their bodies, runs
/// their handlers (inline or on the handler pool), answers in order, lingers after a refused
/// request and hands an upgraded socket to its WebSocket. Lives on one event loop thread and is
/// only touched there. What it writes is `HTTPResponseWriter`'s, when it times out
/// `HTTPConnectionDeadline`'s, the format of its errors `HTTPErrorResponderChoice`'s.
final class HTTPConnection {
    /// `lingering`: the response is out and the write side shut down; the rest of a refused
    /// request is read and dropped until the client closes or a linger limit passes.
    /// `upgraded`: the socket speaks WebSocket now (`webSocket`).
    private enum Phase { case head, body, handling, writing, lingering, upgraded, closed }

    /// The connected socket.
    let fd: Int32
    /// The loop that owns this connection; every method runs on its thread. The loop keeps its
    /// connections and outlives them, so the reference needs no checking on each use.
    unowned(unsafe) let loop: EventLoop
    private let server: HTTPServerCore
    /// The peer as text, for logs and `HTTPRequest.remoteAddress`.
    let remoteAddress: String

    private let buffer = ByteBuffer()
    private var parser: HTTPRequestParser
    private var phase = Phase.head
    /// The current timeout and the transfer rates it watches.
    private var timer: HTTPConnectionDeadline
    private var peerClosed = false
    private var drainedSocket = false
    /// The last flush stopped on EAGAIN: the reactor must report when the socket takes more.
    private var writeBlocked = false
    /// epoll reported EPOLLRDHUP/EPOLLHUP: the peer's FIN (or a reset) is queued behind any data, and
    /// being edge-triggered, epoll will not report it again, so reads go on until recv says so.
    private var hangUpSeen = false
    /// The reactor's `shortReadDrainsSocket`, read once.
    private let shortReadDrainsSocket: Bool

    // The exchange in progress.
    private var request: HTTPRequest?
    private var route: HTTPRoute?
    private var responders: HTTPErrorResponderChoice
    private var sink: RequestBodySink?
    private var requestStart: UInt64 = 0
    private var requestKeepAlive = true
    private var closeAfterResponse = false
    /// The response answers a request whose bytes were not all read (413, 431, 403 before the body …):
    /// close with a lingering read so the client's pending send does not turn into a reset that
    /// destroys the answer (RFC 9112 §9.6).
    private var lingerAfterResponse = false
    /// The bytes a lingering read dropped so far.
    private var lingerDiscarded = 0
    private var sentContinue = false
    /// The WebSocket this connection became after an upgrade.
    private var webSocket: WebSocketConnection?

    // The response being written.
    private var writer = HTTPResponseWriter()
    private var responseStatus = 0

    /// Wraps an accepted, non-blocking socket.
    init(fd: Int32, loop: EventLoop, server: HTTPServerCore, remoteAddress: String) {
        self.fd = fd
        self.loop = loop
        self.server = server
        self.remoteAddress = remoteAddress
        self.shortReadDrainsSocket = loop.shortReadDrainsSocket
        self.parser = HTTPRequestParser(limits: server.configuration.limits)
        self.responders = HTTPErrorResponderChoice(router: server.router)
        self.timer = HTTPConnectionDeadline(timeouts: server.configuration.timeouts)
        // The first request's head must arrive within headerRead of the accept.
        timer.set(.header, now: loop.now)
    }

    /// Monotonic nanoseconds after which `timedOut()` runs; 0 for none.
    var deadline: UInt64 { timer.at }

    /// Whether the connection waits for a request and has none of it: shutdown closes these at once.
    /// An upgraded connection counts as idle: draining closes it (with 1001) rather than wait for it.
    var isIdle: Bool { phase == .upgraded || (phase == .head && buffer.readableCount == 0 && parser.isIdle) }

    /// Whether the connection is still open.
    var isOpen: Bool { phase != .closed }

    /// Whether the connection reads now: waiting for a request, reading a body, or lingering.
    var wantsRead: Bool {
        switch phase {
        case .head, .body, .lingering: return !peerClosed
        case .upgraded: return webSocket?.wantsRead ?? false
        case .handling, .writing, .closed: return false
        }
    }

    /// Whether a response write stopped on a full send buffer and waits for room.
    var wantsWrite: Bool { phase == .writing ? writeBlocked : phase == .upgraded && webSocket?.wantsWrite == true }

    /// Called with what the reactor saw on the socket.
    func handle(events: ReactorEvents) {
        if events.contains(.readable) || events.contains(.hangUp) { drainedSocket = false }
        if events.contains(.hangUp) { hangUpSeen = true }
        drive()
    }

    /// Runs the state machine until it must wait for the socket or a handler.
    func drive() {
        while true {
            switch phase {
            case .closed, .handling:
                return
            case .upgraded:
                webSocket?.drive()
                webSocketProgressed()
                return
            case .writing:
                guard flush() else { return }
                finishExchange()
            case .lingering:
                if !discardInput() { return }
            case .head, .body:
                if !parseStep() && !readMore() { return }
            }
        }
    }

    // MARK: - Reading

    private func readMore() -> Bool {
        if peerClosed {
            // The client finished sending; nothing it sent forms another request.
            if phase == .body || !isIdle {
                server.logger.notice("client closed mid-request", metadata: ["peer": "\(remoteAddress)"])
            }
            close()
            return false
        }
        if drainedSocket { return false }
        let space = buffer.writableSpace(minimum: phase == .body ? 16 * 1024 : 4 * 1024)
        let n = recv(fd, space.baseAddress, space.count, 0)
        if n > 0 {
            buffer.didWrite(n)
            // A short read emptied the socket; with edge-triggered epoll the next byte brings a new event.
            // Not so for an end of stream that was already reported: read on until recv returns 0.
            if n < space.count && !hangUpSeen && shortReadDrainsSocket { drainedSocket = true }
            switch timer.kind {
            case .idle: timer.set(.header, now: loop.now)  // first byte of a request
            case .body: timer.progressed(n, now: loop.now)
            default: break
            }
            return true
        }
        if n == 0 {
            peerClosed = true
            return true
        }
        switch errno {
        case EAGAIN, EWOULDBLOCK:
            drainedSocket = true
            return false
        case EINTR:
            return true
        default:
            close()
            return false
        }
    }

    /// One parser step over the buffered bytes; false when it needs more input.
    private func parseStep() -> Bool {
        let input = buffer.readable
        let step: (event: HTTPRequestParser.Event?, consumed: Int)
        do {
            step = try parser.next(input)
        } catch {
            parseFailed(error as? HTTPParseError ?? .invalidRequestLine)
            return true
        }
        guard let event = step.event else {
            if step.consumed > 0 {
                buffer.consume(step.consumed)
                return true
            }
            return false
        }
        switch event {
        case .head(let head):
            buffer.consume(step.consumed)
            headReceived(head)
        case .body(let range):
            do {
                try sink?.append(UnsafeRawBufferPointer(rebasing: input[range]))
                buffer.consume(step.consumed)
            } catch {
                buffer.consume(step.consumed)
                closeAfterResponse = true
                lingerAfterResponse = true
                sink?.discard()
                sink = nil
                respondWithError(error)
            }
        case .end(let trailers):
            buffer.consume(step.consumed)
            bodyComplete(trailers: trailers)
        }
        return true
    }

    private func headReceived(_ head: HTTPRequestHead) {
        requestStart = loop.now
        let id = loop.requestIDs.next()
        guard let (path, query) = HTTPRequest.splitTarget(head.target) else {
            request = HTTPRequest(method: head.method, target: "/", version: head.version, remoteAddress: remoteAddress, requestID: id)
            request!.routePattern = "unmatched"
            responders.choose(forUndecodable: head.target)
            parseFailed(.invalidTarget)
            return
        }
        var request = HTTPRequest(head: head, path: path, query: query, remoteAddress: remoteAddress, requestID: id)
        requestKeepAlive = head.keepAlive
        let router = server.router
        switch router.match(method: head.method, path: path) {
        case .route(let route, let parameters):
            request.pathParameters = parameters
            request.routePattern = route.pattern
            self.route = route
            if route.webSocket != nil, WebSocketHandshake.isUpgrade(head.headers) {
                self.request = request
                return upgrade(request, route: route, hasBody: head.hasBody)
            }
            var admitted: HTTPBodyObserver?
            if let admission = route.admission {
                do {
                    admitted = try admission(request)
                } catch {
                    // Refused on the head alone (keys, disk space): answered now, the body never stored.
                    self.request = request
                    refuseBeforeBody(error, hasUnreadBody: head.hasBody)
                    return
                }
            }
            let limit = route.maxBodyBytes ?? server.configuration.limits.maxBodyBytes
            if let length = head.contentLength, length > limit {
                // Refused before reading it (and without 100 Continue); the unread body forces a close.
                self.request = request
                server.logger.notice(
                    "request body too large", metadata: ["request": "\(id)", "length": "\(length)", "limit": "\(limit)"])
                respondServerError(.contentTooLarge, "request body too large", hasUnreadBody: true)
                return
            }
            parser.bodyLimit = limit
            if head.hasBody {
                let observer = admitted ?? route.bodyObserverFactory?()
                request.bodyObserver = observer
                do {
                    sink = try RequestBodySink(
                        expectedLength: head.contentLength, threshold: server.configuration.limits.inMemoryBodyThreshold,
                        directory: server.configuration.temporaryDirectory, observer: observer)
                } catch {
                    self.request = request
                    closeAfterResponse = true
                    lingerAfterResponse = true
                    respondWithError(error)
                    return
                }
                // RFC 9110 §10.1.1: answer 100 only when we intend to read the body, and only if the client
                // has not started sending it anyway.
                if head.expectContinue && buffer.readableCount == 0 { sendContinue() }
                timer.startTransfer(.body, now: loop.now, transferred: buffer.readableCount)
            } else {
                timer.clear()
            }
            self.request = request
            phase = .body
        case .methodNotAllowed(let allow):
            self.request = request
            respondServerError(.methodNotAllowed, "method not allowed", headers: ["Allow": allow], hasUnreadBody: head.hasBody)
        case .options(let allow):
            self.request = request
            var response = HTTPResponse(status: .noContent)
            response.headers["Allow"] = allow
            if head.hasBody {
                closeAfterResponse = true
                lingerAfterResponse = true
            } else {
                parser.discardEmptyBody()
            }
            startResponse(response)
        case .notFound:
            self.request = request
            respondServerError(.notFound, "not found", hasUnreadBody: head.hasBody)
        }
    }

    private func sendContinue() {
        let line = "HTTP/1.1 100 Continue\r\n\r\n"
        let sent = line.utf8.withContiguousStorageIfAvailable { SystemCalls.send(fd, $0.baseAddress, $0.count) } ?? -1
        if sent != line.utf8.count { closeAfterResponse = true }
        sentContinue = true
    }

    private func bodyComplete(trailers: HTTPHeaders) {
        guard self.request != nil, let route else { return }
        // Changed in place: a copy here would make the request's storage shared and the write copy it.
        if trailers.count > 0 { self.request!.trailers = trailers }
        do {
            if let body = try sink?.finish() { self.request!.body = body }
        } catch {
            sink = nil
            closeAfterResponse = true
            respondWithError(error)
            return
        }
        sink = nil
        let request = self.request!
        phase = .handling
        timer.clear()
        // Chosen from the path only if the handler fails (nil): most requests never need it.
        let responder = responders.chosen
        if route.mayBlock, let inline = route.inlineAnswer, var response = inline(request) {
            // Answered from memory on the loop (HTTPRoute.inlineAnswer): no hop to the pool.
            HTTPResponseEncoder.applyContentCoding(&response, requestHeaders: request.headers)
            startResponse(response)
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
            HTTPResponseEncoder.applyContentCoding(&response, requestHeaders: request.headers)
            startResponse(response)
        }
    }

    private func handlerFinished(_ response: HTTPResponse, request: HTTPRequest) {
        guard phase == .handling else {
            // Closed while the handler ran (shutdown timeout): only the temporary body is left to clean,
            // and a streamed body's producer to stop.
            if case .file(let path, _) = request.body { unlink(path) }
            if case .stream(let stream, _) = response.body { stream.cancel() }
            return
        }
        startResponse(response)
        drive()
        loop.updateInterest(self)
    }

    // MARK: - Errors made by the server

    private func parseFailed(_ error: HTTPParseError) {
        sink?.discard()
        sink = nil
        closeAfterResponse = true
        if request == nil {
            let line = parser.requestLine
            var synthetic = HTTPRequest(
                method: HTTPMethod(rawValue: line?.method ?? "GET"), target: "/", remoteAddress: remoteAddress,
                requestID: loop.requestIDs.next())
            synthetic.routePattern = "unmatched"
            requestStart = loop.now
            if let target = line?.target, let split = HTTPRequest.splitTarget(target) {
                synthetic.target = target
                synthetic.path = split.path
                synthetic.query = split.query
                responders.choose(forPath: synthetic.path)
            } else {
                responders.choose(forUndecodable: line?.target)
            }
            request = synthetic
        }
        server.logger.notice(
            "bad request: \(error)",
            metadata: ["request": "\(request!.requestID)", "peer": "\(remoteAddress)", "status": "\(error.status.code)"])
        respondServerError(error.status, error.description, hasUnreadBody: true)
    }

    /// The error responder of the current request's URL space, chosen by its path when first needed.
    private func currentResponder() -> HTTPErrorResponder { responders.responder(for: request) }

    /// A status the server decided (404, 405, 413, parse errors), rendered by the URL space's responder.
    private func respondServerError(
        _ status: HTTPStatus, _ message: String, headers: HTTPHeaders = HTTPHeaders(), hasUnreadBody: Bool
    ) {
        guard let request else { return }
        if hasUnreadBody {
            closeAfterResponse = true
            lingerAfterResponse = true
        } else {
            parser.discardEmptyBody()
        }
        var response = currentResponder().response(status: status, message: message, request: request)
        for field in headers { response.headers[field.name] = field.value }
        HTTPResponseEncoder.applyContentCoding(&response, requestHeaders: request.headers)
        startResponse(response)
    }

    /// An error a route's admission threw on the head, rendered by the responder; a body the client
    /// sends anyway is not stored, but read and discarded by a lingering close after the answer.
    private func refuseBeforeBody(_ error: Error, hasUnreadBody: Bool) {
        guard let request else { return close() }
        if hasUnreadBody {
            // The unread body is drained by a lingering close, so the client reads this answer.
            closeAfterResponse = true
            lingerAfterResponse = true
        } else {
            parser.discardEmptyBody()
        }
        var response = currentResponder().response(for: error, request: request)
        HTTPResponseEncoder.applyContentCoding(&response, requestHeaders: request.headers)
        startResponse(response)
    }

    /// An error thrown while receiving the body (temporary file trouble), rendered by the responder.
    private func respondWithError(_ error: Error) {
        guard let request else { return close() }
        server.logger.error("request failed: \(error)", metadata: ["request": "\(request.requestID)"])
        startResponse(currentResponder().response(for: error, request: request))
    }

    // MARK: - Writing

    private func startResponse(_ response: HTTPResponse) {
        guard phase != .closed, let request else { return }
        writer.begin()
        var response = response
        let sendsBody = request.method != .head && !HTTPResponseEncoder.hasNoContent(response.status.code)
        if let unopened = writer.takeFile(of: response.body, sendsBody: sendsBody) {
            server.logger.error("cannot open response file \(unopened)", metadata: ["request": "\(request.requestID)"])
            response = currentResponder().response(status: .internalServerError, message: "internal server error", request: request)
            switch response.body {
            case .file, .descriptor: response.body = .empty
            default: break
            }
        }
        switch response.body {
        case .bytes(let bytes) where sendsBody:
            writer.setBody(bytes)
        case .stream(let stream, let length):
            if sendsBody && length > 0 {
                writer.setStream(stream, length: length)
                // Runs on the producer's thread when a `.pending` read has something new; strong on
                // purpose: the cycle ends when the exchange cancels the stream (which drops the waker).
                let loop = self.loop
                stream.setWaker { [self] in loop.execute { self.streamReady(stream) } }
            } else {
                stream.cancel()
            }
        default:
            break
        }
        let handlerClose = response.headers.containsToken("close", in: "Connection")
        if handlerClose { closeAfterResponse = true }
        let keepAlive = requestKeepAlive && !closeAfterResponse && !loop.draining
        if !keepAlive { closeAfterResponse = true }
        loop.encoder.encodeHead(
            response, into: &writer.head, requestID: request.requestID, keepAlive: keepAlive, clientVersion: request.version)
        responseStatus = response.status.code
        phase = .writing
        timer.startTransfer(.write, now: loop.now)
    }

    /// Writes what is pending; true once the whole response is out.
    private func flush() -> Bool {
        writeBlocked = false
        let (outcome, written) = writer.flush(to: fd)
        if written > 0 { timer.progressed(written, now: loop.now) }
        switch outcome {
        case .done:
            return true
        case .blocked:
            writeBlocked = true
            return false
        case .fileEndedEarly:
            server.logger.error("response file shorter than its Content-Length", metadata: ["request": "\(request?.requestID ?? "")"])
            abortWrite()
            return false
        case .failed:
            abortWrite()
            return false
        case .waitingForStream:
            return false
        case .streamFailed(let message):
            server.logger.error("\(message)", metadata: ["request": "\(request?.requestID ?? "")"])
            abortWrite()
            return false
        }
    }

    /// The stream has bytes (or an end) after a `.pending` read: carry on writing.
    private func streamReady(_ ready: HTTPBodyStream) {
        guard phase == .writing, writer.stream === ready else { return }
        drive()
        loop.updateInterest(self)
    }

    private func abortWrite() {
        finishExchange(completed: false)
        close()
    }

    /// After the response: metrics, access log, temporary file cleanup, then the next request or close.
    private func finishExchange(completed: Bool = true) {
        writer.finish()
        let responseBytes = writer.bytesWritten
        if let request {
            let elapsed = monotonicNanoseconds() - requestStart
            let seconds = Double(elapsed) / 1e9
            server.observer?.requestFinished(
                method: request.method, routePattern: request.routePattern, status: responseStatus,
                durationSeconds: seconds, bytesSent: responseBytes)
            if let accessLog = server.accessLog {
                accessLog.buffers[loop.index % accessLog.buffers.count].record(
                    remote: remoteAddress, method: request.method.rawValue, path: request.path,
                    status: responseStatus, bytes: responseBytes, nanoseconds: elapsed,
                    requestID: request.requestID, aborted: !completed)
            }
            if case .file(let path, _) = request.body { unlink(path) }
        }
        sink?.discard()
        sink = nil
        request = nil
        route = nil
        responders.reset()
        sentContinue = false
        guard completed else { return }
        if closeAfterResponse || loop.draining {
            if lingerAfterResponse && !peerClosed {
                startLingering()
            } else {
                close()
            }
            return
        }
        phase = .head
        if buffer.readableCount > 0 {
            timer.set(.header, now: loop.now)
        } else {
            buffer.shrinkIfEmpty(above: 64 * 1024)
            timer.set(.idle, now: loop.now)
        }
    }

    // MARK: - Lingering close

    /// Sends our FIN after the response and starts reading what the client still sends, bounded by
    /// `lingerTimeout` per pause, `lingerTime` in all and `maxLingerBytes` (nginx's lingering_close).
    private func startLingering() {
        lingerAfterResponse = false
        guard SystemCalls.shutdownWrite(fd) else { return close() }
        phase = .lingering
        lingerDiscarded = buffer.readableCount
        buffer.consume(buffer.readableCount)
        timer.startLingering(now: loop.now)
    }

    /// Reads and drops input while lingering; false when it must wait for the socket.
    private func discardInput() -> Bool {
        if lingerDiscarded > server.configuration.limits.maxLingerBytes {
            close()
            return false
        }
        if drainedSocket { return false }
        let space = buffer.writableSpace(minimum: 16 * 1024)
        let n = recv(fd, space.baseAddress, space.count, 0)
        if n > 0 {
            lingerDiscarded += n
            timer.lingered(now: loop.now)
            return true
        }
        if n < 0 && errno == EINTR { return true }
        if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
            drainedSocket = true
            return false
        }
        // The client closed (or reset) after reading the answer: done.
        close()
        return false
    }

    // MARK: - Timeouts and closing

    /// The deadline passed: idle connections close quietly, slow requests get 408, stalled writes are dropped.
    func timedOut() {
        if phase == .upgraded {
            webSocket?.timedOut()
            return webSocketProgressed()
        }
        switch timer.kind {
        case .idle, .linger:
            close()
        case .header, .body:
            if !isIdle || timer.kind == .body {
                let what = timer.kind == .header ? "head" : timer.isRate ? "body below the minimum rate" : "body stalled"
                server.logger.notice("request timed out (\(what))", metadata: ["peer": "\(remoteAddress)"])
                sendTimeoutResponse(message: timer.isRate ? "request body too slow" : "request timed out")
            }
            close()
        case .write:
            let what = timer.isRate ? "client reading below the minimum rate" : "client stopped reading"
            server.logger.notice("response write timed out (\(what))", metadata: ["peer": "\(remoteAddress)"])
            // Reset rather than close: a plain close would leave the unsent response queued in the
            // kernel for the same slow client, holding the memory this timeout is meant to free.
            var reset = linger(l_onoff: 1, l_linger: 0)
            setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, socklen_t(MemoryLayout<linger>.size))
            abortWrite()
        }
    }

    /// A best-effort 408 before closing: in the URL space's format when the request head is known
    /// (Parse JSON under /parse), `HTTPResponse.requestHeadTimeout` otherwise. Never waits on the socket.
    private func sendTimeoutResponse(message: String) {
        let bytes: [UInt8]
        if let request {
            var response = currentResponder().response(status: .requestTimeout, message: message, request: request)
            if case .bytes = response.body {} else { response.body = .empty }
            bytes = loop.encoder.encode(response, requestID: request.requestID, keepAlive: false, clientVersion: request.version)
        } else {
            bytes = loop.encoder.encode(
                .requestHeadTimeout, requestID: loop.requestIDs.next(), keepAlive: false, clientVersion: .http11)
        }
        _ = bytes.withUnsafeBytes { SystemCalls.send(fd, $0.baseAddress, $0.count, dontWait: true) }
    }

    /// Closes the socket and forgets the connection. Safe to call twice.
    func close() {
        guard phase != .closed else { return }
        let wasHandling = phase == .handling
        if phase == .upgraded { webSocket?.abandon() }
        webSocket = nil
        phase = .closed
        timer.clear()
        sink?.discard()
        sink = nil
        writer.closeFile()
        writer.cancelStream()
        // A running handler still owns the request's temporary file; handlerFinished removes it.
        if !wasHandling, let request, case .file(let path, _) = request.body { unlink(path) }
        request = nil
        loop.closeSocket(fd)
        loop.connectionClosed(self)
    }

    // MARK: - WebSocket upgrade

    /// Answers a WebSocket handshake (RFC 6455 §4.2.2) on a route that accepts one, and hands the
    /// socket to a `WebSocketConnection` on this same loop.
    private func upgrade(_ request: HTTPRequest, route: HTTPRoute, hasBody: Bool) {
        guard let accept = route.webSocket else { return }
        guard request.method == .get, !hasBody, let key = WebSocketHandshake.key(request.headers) else {
            // §4.2.2: a bad handshake gets a 400 and, for a wrong version, the one we speak.
            server.logger.notice("bad websocket handshake", metadata: ["request": "\(request.requestID)"])
            return respondServerError(
                .badRequest, "bad websocket handshake", headers: ["Sec-WebSocket-Version": "13"], hasUnreadBody: hasBody)
        }
        let handler: WebSocketHandler
        do {
            handler = try accept(request)
        } catch {
            parser.discardEmptyBody()
            var response = currentResponder().response(for: error, request: request)
            HTTPResponseEncoder.applyContentCoding(&response, requestHeaders: request.headers)
            return startResponse(response)
        }
        server.logger.info("websocket opened \(request.path)", metadata: ["request": "\(request.requestID)"])
        let connection = WebSocketConnection(
            fd: fd, loop: loop, limits: route.webSocketLimits, handler: handler, logger: server.logger,
            remoteAddress: remoteAddress, initial: WebSocketHandshake.switchingProtocols(key: key), leftover: buffer.readable)
        buffer.consume(buffer.readableCount)
        self.request = nil
        self.route = nil
        phase = .upgraded
        webSocket = connection
        connection.progressed = { [unowned(unsafe) self] in
            self.webSocketProgressed()
            self.loop.updateInterest(self)
        }
        connection.start()
    }

    /// After the WebSocket ran: its deadline becomes the connection's, or the socket closes.
    private func webSocketProgressed() {
        guard phase == .upgraded, let webSocket else { return }
        if webSocket.isFinished {
            close()
        } else {
            timer.follow(webSocket.deadline)
        }
    }
}
