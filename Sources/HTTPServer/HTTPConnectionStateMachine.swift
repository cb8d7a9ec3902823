/// What an HTTP/1.1 connection is doing and what it must do next, without a socket (as
/// postgres-nio's `ConnectionStateMachine`): `HTTPConnection` reports each event (bytes read, a head
/// parsed, a body done, a write drained or blocked, the deadline passed, the peer's FIN) and
/// performs the `Action` it gets back. The buffer, parser, request and handlers stay the
/// connection's; the state, its flags and the deadline live here, so every transition is tested
/// without sockets (HTTPConnectionStateMachineTests). A value mutated in place on the loop's thread:
/// no allocation, and actions carry no heap payloads. Decision 028.
struct HTTPConnectionStateMachine: Sendable {
    /// Where the connection is in its exchange.
    enum State: Equatable, Sendable {
        /// Waiting for a request head, or parsing one.
        case head
        /// Reading the body of a request that was routed and admitted.
        case body
        /// A handler runs; nothing more is read until its response starts, so that pipelined
        /// requests are answered in order.
        case handling
        /// A response is being written.
        case writing
        /// The response is out and the write side shut down; the rest of a refused request is read
        /// and dropped until the client closes or a linger limit passes (RFC 9112 §9.6).
        case lingering
        /// The socket speaks WebSocket now; its `WebSocketConnection` keeps its own state.
        case upgraded
        /// The socket is closed.
        case closed
    }

    /// Why the connection closes, for the log.
    enum CloseReason: Equatable, Sendable {
        /// The client closed between requests.
        case peerClosed
        /// The client closed with part of a request sent.
        case peerClosedMidRequest
        /// recv failed (a reset).
        case readFailed
        /// The response said `Connection: close`, or the server drains.
        case afterResponse
        /// A lingering close ended: the client closed, or it sent more than `maxLingerBytes`.
        case lingerEnded
        /// An idle, head or linger deadline passed with nothing to answer.
        case timedOut
        /// The WebSocket finished.
        case webSocketFinished
    }

    /// Which deadline made a request time out, for the 408's message and the log.
    enum TimeoutCause: Equatable, Sendable {
        /// The head did not arrive within `headerRead`.
        case head
        /// The body fell below the minimum rate.
        case bodyRate
        /// The body stalled for `bodyRead`.
        case bodyStall
    }

    /// How a flush of the response ended (`HTTPResponseWriter.FlushOutcome`, without its message).
    enum FlushResult: Equatable, Sendable {
        case done, blocked, waitingForStream, failed
    }

    /// What the connection must do next.
    enum Action: Equatable, Sendable {
        /// Nothing until the socket or a handler reports.
        case wait
        /// Run the parser over the buffered bytes.
        case parse
        /// recv into the buffer, with at least `minimum` bytes of room.
        case read(minimum: Int)
        /// Send `100 Continue` (RFC 9110 §10.1.1), then report `continueSent`.
        case sendContinue
        /// The request is complete: run its handler.
        case dispatch
        /// Write what is pending of the response, then report `flushed`.
        case flush
        /// The response is out: log it, clean up, then report `exchangeFinished`.
        case finishExchange
        /// The response cannot be finished: log it as aborted and close.
        case abortExchange
        /// Shut the write side and report `lingerStarted` with the bytes buffered (dropped).
        case startLingering
        /// recv and drop what the client still sends of a refused request.
        case discardInput
        /// Let the WebSocket run, then report `webSocketProgressed`.
        case driveWebSocket
        /// The WebSocket's deadline passed: tell it, then report `webSocketProgressed`.
        case timeOutWebSocket
        /// Send a best-effort 408 without waiting on the socket, then close.
        case respondTimeout(TimeoutCause)
        /// The client stopped reading the response: reset (SO_LINGER 0) and abort the exchange.
        case resetStalledWrite(belowMinimumRate: Bool)
        /// Close the socket.
        case close(CloseReason)
    }

    /// Where the connection is.
    private(set) var state = State.head
    /// The current timeout and the transfer rates it watches; `deadline` is its moment.
    private(set) var timer: HTTPConnectionDeadline
    /// The client sent its FIN (recv returned 0).
    private(set) var peerClosed = false
    /// The last read emptied the socket: with edge-triggered readiness, wait for the next event.
    private(set) var socketDrained = false
    /// The last flush stopped on EAGAIN: the reactor must report when the socket takes more.
    private(set) var writeBlocked = false
    /// epoll reported EPOLLRDHUP/EPOLLHUP: the peer's FIN (or a reset) is queued behind any data,
    /// and being edge-triggered, epoll will not report it again, so reads go on until recv says so.
    private var hangUpSeen = false
    /// The reactor's `shortReadDrainsSocket`.
    private let shortReadDrainsSocket: Bool
    /// `HTTPLimits.maxLingerBytes`.
    private let maxLingerBytes: Int

    // The exchange in progress.
    /// The request allows keep-alive (HTTP/1.1 without `Connection: close`).
    private var requestKeepAlive = true
    /// The request asked for `100 Continue`, not yet answered either way.
    private var expectsContinue = false
    /// `100 Continue` went out for this request.
    private(set) var continueSent = false
    /// The connection closes after this response.
    private(set) var closeAfterResponse = false
    /// The response answers a request whose bytes were not all read (413, 431, 403 before the
    /// body …): close with a lingering read so the client's pending send does not turn into a reset
    /// that destroys the answer (RFC 9112 §9.6).
    private(set) var lingerAfterResponse = false
    /// The bytes a lingering read dropped so far.
    private(set) var lingerDiscarded = 0

    /// A connection accepted at `now`: its first head must arrive within `headerRead`.
    init(limits: HTTPLimits, timeouts: HTTPTimeouts, shortReadDrainsSocket: Bool, now: UInt64) {
        self.maxLingerBytes = limits.maxLingerBytes
        self.shortReadDrainsSocket = shortReadDrainsSocket
        self.timer = HTTPConnectionDeadline(timeouts: timeouts)
        timer.set(.header, now: now)
    }

    /// Monotonic nanoseconds after which `timerFired` is due; 0 for none.
    var deadline: UInt64 { timer.at }

    /// Whether the socket is still open.
    var isOpen: Bool { state != .closed }

    /// Whether the connection waits for a request and has none of it (`requestStarted`: bytes are
    /// buffered or the parser is mid-message). An upgraded connection counts as idle: draining
    /// closes it (with 1001) rather than wait for it.
    func isIdle(requestStarted: Bool) -> Bool { state == .upgraded || (state == .head && !requestStarted) }

    /// Whether the connection reads now (an upgraded one asks its WebSocket).
    var wantsRead: Bool {
        switch state {
        case .head, .body, .lingering: return !peerClosed
        case .handling, .writing, .upgraded, .closed: return false
        }
    }

    /// Whether a response write stopped on a full send buffer and waits for room.
    var wantsWrite: Bool { state == .writing && writeBlocked }

    // MARK: - Socket and loop events

    /// The reactor reported the socket readable or hung up: reads may go on.
    mutating func socketEvents(readable: Bool, hangUp: Bool) {
        if readable || hangUp { socketDrained = false }
        if hangUp { hangUpSeen = true }
    }

    /// What to do now, from the state alone: the step the connection resumes with after any event.
    mutating func resume() -> Action {
        switch state {
        case .closed, .handling:
            return .wait
        case .upgraded:
            return .driveWebSocket
        case .writing:
            return .flush
        case .lingering:
            if lingerDiscarded > maxLingerBytes { return .close(.lingerEnded) }
            return socketDrained ? .wait : .discardInput
        case .head, .body:
            return .parse
        }
    }

    /// The parser needs more bytes than are buffered.
    mutating func parserNeedsInput(requestStarted: Bool) -> Action {
        if peerClosed {
            // The client finished sending; nothing it sent forms another request.
            return .close(state == .body || requestStarted ? .peerClosedMidRequest : .peerClosed)
        }
        if socketDrained { return .wait }
        return .read(minimum: state == .body ? 16 * 1024 : 4 * 1024)
    }

    /// recv put `count` bytes into `room`.
    mutating func bytesRead(_ count: Int, room: Int, now: UInt64) -> Action {
        // A short read emptied the socket; with edge-triggered epoll the next byte brings a new event.
        // Not so for an end of stream that was already reported: read on until recv returns 0.
        if count < room && !hangUpSeen && shortReadDrainsSocket { socketDrained = true }
        switch timer.kind {
        case .idle: timer.set(.header, now: now)  // first byte of a request
        case .body: timer.progressed(count, now: now)
        default: break
        }
        return .parse
    }

    /// recv returned 0: the client's FIN. A lingering close is done; otherwise what is buffered is
    /// parsed first.
    mutating func readEnded() -> Action {
        if state == .lingering { return .close(.lingerEnded) }
        peerClosed = true
        return .parse
    }

    /// recv found nothing (EAGAIN).
    mutating func readWouldBlock() -> Action {
        socketDrained = true
        return .wait
    }

    /// recv failed.
    func readFailed() -> Action { state == .lingering ? .close(.lingerEnded) : .close(.readFailed) }

    // MARK: - Request events

    /// A head was parsed and its target understood.
    mutating func headReceived(keepAlive: Bool, expectContinue: Bool) {
        requestKeepAlive = keepAlive
        expectsContinue = expectContinue
    }

    /// The route takes the request: read its body (if any) under the body timeout, `buffered`
    /// bytes of it already here. 100 Continue only when asked and the client has not started
    /// sending anyway (RFC 9110 §10.1.1).
    mutating func bodyWanted(hasBody: Bool, buffered: Int, now: UInt64) -> Action {
        state = .body
        guard hasBody else {
            timer.clear()
            return .parse
        }
        timer.startTransfer(.body, now: now, transferred: buffered)
        if expectsContinue && buffered == 0 {
            expectsContinue = false
            return .sendContinue
        }
        return .parse
    }

    /// `100 Continue` was sent, whole or not: a partial one spoils the stream, so close after.
    mutating func continueSent(completely: Bool) -> Action {
        expectsContinue = false
        continueSent = true
        if !completely { closeAfterResponse = true }
        return .parse
    }

    /// The request is answered before its body is read (404, 405, 413, refused on the head): a body
    /// left unread means closing after the answer, lingering so the client reads it.
    mutating func answeredBeforeBody(unreadBody: Bool) {
        expectsContinue = false
        if unreadBody { requestFailed(unreadBody: true) }
    }

    /// Receiving the request failed (a parse error, the body's temporary file): close after the
    /// answer, lingering when part of the request is still unread.
    mutating func requestFailed(unreadBody: Bool) {
        closeAfterResponse = true
        if unreadBody { lingerAfterResponse = true }
    }

    /// The whole body is in: the handler runs and nothing is read or timed until it answers.
    mutating func bodyComplete() -> Action {
        state = .handling
        timer.clear()
        return .dispatch
    }

    // MARK: - Response events

    /// A response starts; `closeRequested` if it says `Connection: close`, `draining` if the server
    /// stops. Returns whether the response keeps the connection alive.
    mutating func responseStarted(closeRequested: Bool, draining: Bool, now: UInt64) -> Bool {
        expectsContinue = false
        if closeRequested { closeAfterResponse = true }
        let keepAlive = requestKeepAlive && !closeAfterResponse && !draining
        if !keepAlive { closeAfterResponse = true }
        state = .writing
        timer.startTransfer(.write, now: now)
        return keepAlive
    }

    /// A flush wrote `written` bytes and ended with `result`.
    mutating func flushed(written: Int, result: FlushResult, now: UInt64) -> Action {
        writeBlocked = false
        if written > 0 { timer.progressed(written, now: now) }
        switch result {
        case .done:
            return .finishExchange
        case .blocked:
            writeBlocked = true
            return .wait
        case .waitingForStream:
            return .wait
        case .failed:
            return .abortExchange
        }
    }

    /// The exchange was logged and cleaned up after its response, with `buffered` bytes of the next
    /// request already read: the next request, a lingering close, or a close.
    mutating func exchangeFinished(buffered: Int, draining: Bool, now: UInt64) -> Action {
        continueSent = false
        expectsContinue = false
        if closeAfterResponse || draining {
            return lingerAfterResponse && !peerClosed ? .startLingering : .close(.afterResponse)
        }
        state = .head
        timer.set(buffered > 0 ? .header : .idle, now: now)
        return .parse
    }

    /// The write side is shut and `discarded` buffered bytes were dropped: linger, bounded by
    /// `lingerTimeout` per pause, `lingerTime` in all and `maxLingerBytes` (nginx's lingering_close).
    mutating func lingerStarted(discarded: Int, now: UInt64) -> Action {
        lingerAfterResponse = false
        state = .lingering
        lingerDiscarded = discarded
        timer.startLingering(now: now)
        return resume()
    }

    /// A lingering read dropped `count` bytes.
    mutating func discarded(_ count: Int, now: UInt64) -> Action {
        lingerDiscarded += count
        timer.lingered(now: now)
        return resume()
    }

    // MARK: - Upgrade, deadline, close

    /// The socket was handed to a WebSocket.
    mutating func upgraded() -> Action {
        state = .upgraded
        return .driveWebSocket
    }

    /// The WebSocket ran: it finished, or its deadline becomes the connection's.
    mutating func webSocketProgressed(finished: Bool, deadline: UInt64) -> Action {
        guard state == .upgraded else { return .wait }
        if finished { return .close(.webSocketFinished) }
        timer.follow(deadline)
        return .wait
    }

    /// The deadline passed: idle connections close quietly, slow requests get a 408, stalled
    /// writes are reset, a WebSocket decides for itself.
    func timerFired(requestStarted: Bool) -> Action {
        switch state {
        case .upgraded: return .timeOutWebSocket
        case .closed: return .wait
        default: break
        }
        switch timer.kind {
        case .idle, .linger:
            return .close(.timedOut)
        case .header:
            return isIdle(requestStarted: requestStarted) ? .close(.timedOut) : .respondTimeout(.head)
        case .body:
            return .respondTimeout(timer.isRate ? .bodyRate : .bodyStall)
        case .write:
            return .resetStalledWrite(belowMinimumRate: timer.isRate)
        }
    }

    /// The socket closes; returns the state it was in (a running handler still owns its request).
    mutating func closed() -> State {
        let previous = state
        state = .closed
        timer.clear()
        return previous
    }
}
