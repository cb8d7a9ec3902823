import Foundation
import Logging

/// The WebSocket side of an upgraded `HTTPConnection` (RFC 6455): frames in, messages to the
/// handler, frames out, pings when idle, the closing handshake. Lives on the connection's event
/// loop and is only touched there; no thread waits on it between socket events.
final class WebSocketConnection {
    /// `closing`: our close frame is queued or sent; input is read and dropped until the peer
    /// closes or `closeTimeout` passes. `finished`: the HTTP connection may close the socket.
    private enum State { case open, closing, finished }

    let fd: Int32
    unowned(unsafe) let loop: EventLoop
    private let limits: WebSocketLimits
    private let handler: WebSocketHandler
    private let logger: Logger
    /// The application's handle.
    let socket: WebSocket
    /// Runs after work that did not come from a socket event (a send from another thread), so
    /// the HTTP connection can update its interest, deadline, or close.
    var progressed: () -> Void = {}

    private let buffer = ByteBuffer()
    private let decoder: WebSocketFrameDecoder
    private var state = State.open
    private var out: [UInt8] = []
    private var outSent = 0
    private var writeBlocked = false
    private var peerClosed = false
    /// Close the socket (not wait for the peer) once the queued bytes are out: the peer's close arrived.
    private var closeWhenFlushed = false
    private var message: [UInt8] = []
    private var messageOpcode: WebSocketOpcode?
    private var awaitingPong = false
    private var closeCode = WebSocketCloseCode.goingAway
    /// Monotonic nanoseconds of the next ping, pong check or close timeout.
    private(set) var deadline: UInt64 = 0

    /// Takes over the socket after the handshake; `initial` is the 101 head, `leftover` what the
    /// client sent after its request head.
    init(
        fd: Int32, loop: EventLoop, limits: WebSocketLimits, handler: WebSocketHandler, logger: Logger,
        remoteAddress: String, initial: [UInt8], leftover: UnsafeRawBufferPointer
    ) {
        self.fd = fd
        self.loop = loop
        self.limits = limits
        self.handler = handler
        self.logger = logger
        self.decoder = WebSocketFrameDecoder(limits: limits)
        socket = WebSocket(loop: loop, remoteAddress: remoteAddress)
        out = initial
        if leftover.count > 0 {
            let space = buffer.writableSpace(minimum: leftover.count)
            space.copyMemory(from: leftover)
            buffer.didWrite(leftover.count)
        }
        socket.connection = self
        setIdleDeadline()
    }

    /// Tells the handler the connection is open.
    func start() { handler.opened(socket) }

    /// Whether the HTTP connection should close the socket now.
    var isFinished: Bool { state == .finished }
    /// Whether to watch for input.
    var wantsRead: Bool { state != .finished && !peerClosed }
    /// Whether a write stopped on a full send buffer.
    var wantsWrite: Bool { state != .finished && writeBlocked }

    /// Writes what is queued and reads what arrived, until the socket would block.
    func drive() {
        while state != .finished {
            flush()
            if state == .finished { return }
            if buffer.readableCount > 0, state == .open, processFrame() { continue }
            if !readMore() { break }
        }
    }

    // MARK: - Reading

    /// One recv into the buffer; false when the socket is empty or gone.
    private func readMore() -> Bool {
        if peerClosed {
            finish(state == .open ? .goingAway : closeCode)
            return false
        }
        let space = buffer.writableSpace(minimum: 4096)
        let n = recv(fd, space.baseAddress, space.count, 0)
        if n > 0 {
            if state == .closing {
                // Input after our close frame is dropped (§5.5.1).
                buffer.didWrite(n)
                buffer.consume(buffer.readableCount)
            } else {
                buffer.didWrite(n)
            }
            return true
        }
        if n == 0 {
            peerClosed = true
            return true
        }
        if errno == EINTR { return true }
        if errno == EAGAIN || errno == EWOULDBLOCK { return false }
        finish(.goingAway)
        return false
    }

    /// Decodes and acts on one frame; false when the buffer holds no whole frame.
    private func processFrame() -> Bool {
        let step: (frame: WebSocketFrame, consumed: Int)?
        do {
            step = try decoder.next(buffer.readable)
        } catch let error as WebSocketError {
            fail(error)
            return true
        } catch {
            fail(.badFragmentation)
            return true
        }
        guard let (frame, consumed) = step else { return false }
        buffer.consume(consumed)
        awaitingPong = false
        setIdleDeadline()
        do {
            try handle(frame)
        } catch let error as WebSocketError {
            fail(error)
        } catch {
            fail(.badFragmentation)
        }
        return true
    }

    private func handle(_ frame: WebSocketFrame) throws {
        switch frame.opcode {
        case .ping:
            queue(WebSocketFrame(fin: true, opcode: .pong, payload: frame.payload))
        case .pong:
            break
        case .close:
            try peerClosing(frame.payload)
        case .text, .binary:
            // §5.4: a new message may not start inside a fragmented one.
            guard messageOpcode == nil else { throw WebSocketError.badFragmentation }
            if frame.fin {
                try deliver(frame.opcode, frame.payload)
            } else {
                messageOpcode = frame.opcode
                message = frame.payload
            }
        case .continuation:
            guard let opcode = messageOpcode else { throw WebSocketError.badFragmentation }
            guard message.count + frame.payload.count <= limits.maxMessageBytes else {
                throw WebSocketError.messageTooBig(message.count + frame.payload.count)
            }
            message += frame.payload
            if frame.fin {
                let whole = message
                message = []
                messageOpcode = nil
                try deliver(opcode, whole)
            }
        }
    }

    private func deliver(_ opcode: WebSocketOpcode, _ payload: [UInt8]) throws {
        guard payload.count <= limits.maxMessageBytes else { throw WebSocketError.messageTooBig(payload.count) }
        if opcode == .text {
            guard let text = String(validating: payload, as: UTF8.self) else { throw WebSocketError.invalidUTF8 }
            handler.received(text: text, on: socket)
        } else {
            handler.received(binary: payload, on: socket)
        }
    }

    /// The peer's close frame (§5.5.1): answered with the same code, then the socket closes.
    private func peerClosing(_ payload: [UInt8]) throws {
        var code = WebSocketCloseCode.normalClosure
        if payload.count == 1 { throw WebSocketError.badClosePayload }
        if payload.count >= 2 {
            code = WebSocketCloseCode(rawValue: UInt16(payload[0]) << 8 | UInt16(payload[1]))
            guard code.isValidOnWire else { throw WebSocketError.badClosePayload }
            guard String(validating: payload[2...], as: UTF8.self) != nil else { throw WebSocketError.invalidUTF8 }
        }
        closeCode = code
        if state == .open {
            queue(Self.closeFrame(code))
            state = .closing
        }
        closeWhenFlushed = true
        deadline = loop.now + UInt64(limits.closeTimeout * 1e9)
    }

    /// The peer broke a rule: logged, answered with the matching close code.
    private func fail(_ error: WebSocketError) {
        logger.notice(
            "websocket protocol error: \(error)",
            metadata: ["peer": "\(socket.remoteAddress)", "close": "\(error.closeCode.rawValue)"])
        buffer.consume(buffer.readableCount)
        closeGracefully(error.closeCode)
    }

    // MARK: - Writing

    /// Queues a data message (from `WebSocket.send`, on the loop).
    func sendMessage(_ opcode: WebSocketOpcode, _ payload: [UInt8]) {
        guard state == .open else { return }
        if out.count - outSent + payload.count > limits.maxOutboundBytes {
            logger.notice("websocket client does not read its messages", metadata: ["peer": "\(socket.remoteAddress)"])
            closeGracefully(.policyViolation)
        } else {
            queue(WebSocketFrame(fin: true, opcode: opcode, payload: payload))
            flush()
        }
        progressed()
    }

    /// Sends a close frame with `code` and waits (bounded) for the peer's.
    func closeGracefully(_ code: WebSocketCloseCode) {
        guard state == .open else { return }
        closeCode = code
        queue(Self.closeFrame(code))
        state = .closing
        deadline = loop.now + UInt64(limits.closeTimeout * 1e9)
        flush()
    }

    private func queue(_ frame: WebSocketFrame) {
        if outSent == out.count {
            out.removeAll(keepingCapacity: true)
            outSent = 0
        }
        out += frame.encoded()
    }

    private func flush() {
        writeBlocked = false
        while outSent < out.count {
            let n = out.withUnsafeBytes { SystemCalls.send(fd, $0.baseAddress! + outSent, $0.count - outSent) }
            if n > 0 {
                outSent += n
                continue
            }
            if n < 0 && errno == EINTR { continue }
            if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                writeBlocked = true
                return
            }
            finish(.goingAway)
            return
        }
        if state == .closing {
            if closeWhenFlushed {
                finish(closeCode)
            } else if !peerClosed {
                // Our FIN after the close frame; what the peer still sends is read and dropped,
                // so the close frame is not destroyed by a reset.
                _ = SystemCalls.shutdownWrite(fd)
            }
        }
    }

    // MARK: - Time

    private func setIdleDeadline() {
        guard state == .open else { return }
        deadline = loop.now + UInt64(limits.pingInterval * 1e9)
    }

    /// The deadline passed: ping an idle peer, drop one that did not answer, end a closing handshake.
    func timedOut() {
        switch state {
        case .finished:
            return
        case .closing:
            finish(closeCode)
        case .open:
            if awaitingPong {
                logger.notice("websocket peer did not answer a ping", metadata: ["peer": "\(socket.remoteAddress)"])
                finish(.goingAway)
            } else {
                awaitingPong = true
                queue(WebSocketFrame(fin: true, opcode: .ping, payload: []))
                deadline = loop.now + UInt64(limits.pongTimeout * 1e9)
                flush()
            }
        }
    }

    /// The server goes down or the HTTP connection closes: a best-effort 1001 and the handler told.
    func abandon() {
        if state == .open {
            let frame = Self.closeFrame(.goingAway).encoded()
            _ = frame.withUnsafeBytes { SystemCalls.send(fd, $0.baseAddress, $0.count, dontWait: true) }
        }
        finish(state == .open ? .goingAway : closeCode)
    }

    private func finish(_ code: WebSocketCloseCode) {
        guard state != .finished else { return }
        state = .finished
        deadline = 0
        socket.connection = nil
        handler.closed(socket, code: code)
    }

    private static func closeFrame(_ code: WebSocketCloseCode) -> WebSocketFrame {
        WebSocketFrame(fin: true, opcode: .close, payload: [UInt8(code.rawValue >> 8), UInt8(code.rawValue & 0xFF)])
    }
}
