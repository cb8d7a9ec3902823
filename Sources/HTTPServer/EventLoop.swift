import Foundation
import Logging
import Synchronization

/// One event loop: its share of the listening socket, its connections and their deadlines,
/// and the policy over them (accept limits, draining, the connection table). How socket
/// readiness reaches it is its `Reactor`'s business: Dispatch sources on a serial queue, or an
/// epoll thread (`HTTPIOBackend`). Everything here runs on the reactor's thread or queue.
// @unchecked: thread-confined, all but `turn` touched only on the reactor's thread or queue (no lock per request).
final class EventLoop: @unchecked Sendable {
    /// Position among the server's loops (part of request ids).
    let index: Int
    let server: HTTPServerCore
    /// The listening socket, shared by every loop.
    let listener: ListenerHandle
    private var reactor: Reactor!
    /// `reactor.usesInterest`, read once: `updateInterest` skips the call when it does nothing.
    private var reactorUsesInterest = true
    private var listening = false
    private var listenerReleased = false
    private var acceptPausedUntil: UInt64 = 0

    private var connections: [HTTPConnection?] = []
    private(set) var connectionCount = 0
    /// Monotonic nanoseconds at the last wake-up, used for every deadline set during it.
    private(set) var now: UInt64 = monotonicNanoseconds()
    /// Formats response heads and caches the Date header.
    var encoder: HTTPResponseEncoder
    /// Set by shutdown: no more accepting, responses close their connections.
    private(set) var draining = false
    private var forceStop = false
    /// Counts the requests this loop finishes (the server observer's, made for this loop), or nil.
    let recorder: (any HTTPLoopRecorder)?
    /// The ids of the requests this loop reads (and of the answers it gives before one is read).
    var requestIDs: HTTPRequestIDGenerator
    /// How often deadlines are checked.
    let tickNanoseconds: UInt64

    /// The last tick and whether the loop has exited, read by the watchdog from other threads.
    private let turn = Mutex((last: monotonicNanoseconds(), exited: false))
    /// Monotonic nanoseconds of the loop's last deadline tick (at least every 250 ms while it runs;
    /// a loop that stops turning is hung). Reads as "now" once the loop has exited.
    var lastTurn: UInt64 { turn.withLock { $0.exited ? monotonicNanoseconds() : $0.last } }

    /// Signalled when the loop has stopped.
    let exited = DispatchSemaphore(value: 0)

    /// Makes the loop and its reactor and watches the listener; call `start()` to run.
    init(index: Int, server: HTTPServerCore, listener: ListenerHandle, requestPrefix: String) throws {
        self.index = index
        self.server = server
        self.listener = listener
        self.requestIDs = HTTPRequestIDGenerator(serverPrefix: requestPrefix, loopIndex: index)
        self.encoder = HTTPResponseEncoder(defaultHeaders: server.configuration.defaultHeaders)
        self.recorder = server.observer?.makeLoopRecorder()
        // Deadlines are checked a few times per shortest timeout, at most every 250 ms.
        let t = server.configuration.timeouts
        let shortest = min(t.headerRead, t.idleKeepAlive, t.bodyRead, t.write, t.lingerTimeout)
        tickNanoseconds = UInt64(min(0.25, max(0.005, shortest / 4)) * 1e9)
        reactor = try Self.makeReactor(server.configuration.ioBackend, loop: self)
        reactorUsesInterest = reactor.usesInterest
        // On failure the server gives this loop's share of the listener back.
        try reactor.watchListener()
        listening = true
    }

    /// Starts delivering events.
    func start() { reactor.start() }

    /// Runs `task` on the loop. Once the loop has stopped it still runs (on the caller's thread
    /// or the loop's queue), so cleanup work is never lost.
    func execute(_ task: @escaping () -> Void) { reactor.post(task) }

    // MARK: - Called by the reactor

    /// Reads the clock once per wake-up.
    @inline(__always)
    func updateClock() { now = monotonicNanoseconds() }

    /// Whether a short read proves the socket empty until the next event (see `Reactor`).
    var shortReadDrainsSocket: Bool { reactor.shortReadDrainsSocket }

    /// Whether the loop is done: forced, or draining with no connection left.
    var shouldStop: Bool { forceStop || (draining && connectionCount == 0) }

    /// A watched connection's socket is ready.
    @inline(__always)
    func connectionEvent(_ fd: Int32, _ events: ReactorEvents) {
        let slot = Int(fd)
        guard slot < connections.count, let connection = connections[slot] else { return }
        connection.handle(events: events)
        updateInterest(connection)
    }

    /// Tells the reactor what a connection waits for now (after it ran outside a socket event).
    @inline(__always)
    func updateInterest(_ connection: HTTPConnection) {
        if reactorUsesInterest && connection.isOpen {
            reactor.interest(connection.fd, read: connection.wantsRead, write: connection.wantsWrite)
        }
    }

    /// Closes a connection's socket through the reactor (which may still have sources on it).
    @inline(__always)
    func closeSocket(_ fd: Int32) { reactor.unwatchAndClose(fd) }

    /// The periodic tick: deadlines, paused accepting, the watchdog's "last turn".
    func tick() {
        let turned = now
        turn.withLock { $0.last = turned }
        checkDeadlines()
    }

    /// The loop stopped: closes what is left and stops listening.
    func finish() {
        for case let connection? in connections { connection.close() }
        stopListening()
    }

    /// The reactor is done with the loop: `wait()` may return.
    func didExit() {
        turn.withLock { $0.exited = true }
        exited.signal()
    }

    /// Forgets a closed connection and gives its slot back.
    func connectionClosed(_ connection: HTTPConnection) {
        let fd = Int(connection.fd)
        if fd < connections.count, connections[fd] === connection {
            connections[fd] = nil
            connectionCount -= 1
            server.releaseConnection()
            server.observer?.connectionClosed()
        }
    }

    /// Stops accepting, closes idle connections; the rest close after their current response.
    func beginDrain() {
        guard !draining else { return }
        draining = true
        stopListening()
        for case let connection? in connections where connection.isIdle { connection.close() }
    }

    /// Closes every connection now and ends the loop (drain timeout).
    func forceClose() {
        forceStop = true
        stopListening()
        for case let connection? in connections { connection.close() }
    }

    private func stopListening() {
        listening = false
        if !listenerReleased {
            listenerReleased = true
            reactor.unwatchListener()
        }
    }

    private func checkDeadlines() {
        if acceptPausedUntil != 0 && now >= acceptPausedUntil && !listenerReleased {
            acceptPausedUntil = 0
            if !listening {
                reactor.resumeListener()
                listening = true
            }
        }
        for case let connection? in connections where connection.deadline != 0 && connection.deadline <= now {
            connection.timedOut()
        }
    }

    /// Accepts what waits on the listener (up to 64 at a time, so other work is not starved).
    func acceptConnections() {
        guard listening else { return }
        for _ in 0..<64 {
            var address = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let fd = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { SystemCalls.accept(listener.fd, $0, &length) }
            }
            if fd < 0 {
                switch errno {
                case EINTR, ECONNABORTED, EPROTO:
                    continue
                case EMFILE, ENFILE, ENOBUFS, ENOMEM:
                    // Out of descriptors: stop accepting for a moment instead of spinning on a ready listener.
                    server.logger.error("accept failed: \(SocketError.errnoText); pausing accept for 100 ms")
                    reactor.pauseListener()
                    listening = false
                    acceptPausedUntil = now + 100_000_000
                    return
                case EAGAIN, EWOULDBLOCK:
                    return
                default:
                    // EINVAL after shutdown(2) of the listener: this loop stops listening.
                    stopListening()
                    return
                }
            }
            guard server.reserveConnection() else {
                // Over maxConnections: a quick 503 instead of an unbounded number of open sockets.
                let id = requestIDs.next()
                let answer = encoder.encode(
                    .tooManyConnections, requestID: id, keepAlive: false, clientVersion: .http11)
                _ = answer.withUnsafeBytes { SystemCalls.send(fd, $0.baseAddress, $0.count, dontWait: true) }
                SystemCalls.close(fd)
                server.logger.warning(
                    "connection refused: maxConnections (\(server.configuration.maxConnections)) reached",
                    metadata: ["request": "\(id)"])
                continue
            }
            SystemCalls.configureConnection(fd)
            let connection = HTTPConnection(fd: fd, loop: self, server: server, remoteAddress: Self.describe(&address))
            let slot = Int(fd)
            if slot >= connections.count {
                connections.append(
                    contentsOf: repeatElement(nil, count: max(slot + 1 - connections.count, connections.count)))
            }
            connections[slot] = connection
            connectionCount += 1
            server.observer?.connectionOpened()
            guard reactor.watch(fd) else {
                server.logger.error("cannot watch a new connection: \(SocketError.errnoText)")
                connection.close()
                continue
            }
            // Requests often arrive with the connection: try reading right away.
            connection.drive()
            updateInterest(connection)
        }
    }

    /// `127.0.0.1:53122` or `[::1]:53122`.
    static func describe(_ address: inout sockaddr_storage) -> String {
        var host = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        switch Int32(address.ss_family) {
        case AF_INET:
            return withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { sin in
                    var addr = sin.pointee.sin_addr
                    inet_ntop(AF_INET, &addr, &host, socklen_t(host.count))
                    return
                        "\(host.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }):\(UInt16(bigEndian: sin.pointee.sin_port))"
                }
            }
        case AF_INET6:
            return withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { sin6 in
                    var addr = sin6.pointee.sin6_addr
                    inet_ntop(AF_INET6, &addr, &host, socklen_t(host.count))
                    return
                        "[\(host.withUnsafeBufferPointer { String(cString: $0.baseAddress!) })]:\(UInt16(bigEndian: sin6.pointee.sin6_port))"
                }
            }
        default:
            return "unknown"
        }
    }
}
