import Foundation
import Logging

/// One socket thread: an epoll instance (edge-triggered for connections), its share of the
/// listening socket (EPOLLEXCLUSIVE, so one loop wakes per new connection), a task queue other
/// threads post to through an eventfd, and the deadlines of its connections.
final class EventLoop: @unchecked Sendable {
    private static let listenerToken = UInt64.max - 1
    private static let wakeToken = UInt64.max
    private static let maxEvents: Int32 = 256

    /// Position among the server's loops (part of request ids).
    let index: Int
    private let server: HTTPServerCore
    private let epfd: Int32
    private let wakeFD: Int32
    private let listener: ListenerHandle
    private var listening = false
    private var listenerReleased = false
    private var acceptPausedUntil: UInt64 = 0

    private var connections: [HTTPConnection?] = []
    private(set) var connectionCount = 0
    /// Monotonic nanoseconds at the last wake-up, used for every deadline set during it.
    private(set) var now: UInt64 = monotonicNanoseconds()
    /// Formats response heads and caches the Date header.
    var encoder = HTTPResponseEncoder()
    /// Set by shutdown: no more accepting, responses close their connections.
    private(set) var draining = false
    private var forceStop = false
    private var requestCounter: UInt64 = 0
    /// The server's request id prefix, this loop's index in base 36 and a dot: what every request id here starts with.
    private let requestLoopPrefix: [UInt8]
    private let tickNanoseconds: UInt64

    private let turnLock = Lock()
    private var lastTurnValue = monotonicNanoseconds()
    /// Monotonic nanoseconds of the loop's last deadline tick (at least every 250 ms while it runs;
    /// a loop that stops turning is hung). Stays put once the loop exits.
    var lastTurn: UInt64 { turnLock.withLock { exitedFlag ? monotonicNanoseconds() : lastTurnValue } }
    private var exitedFlag = false

    private let taskLock = Lock()
    private var tasks: [() -> Void] = []
    private var wakePending = false
    private var stopped = false
    /// Signalled when the loop thread has exited.
    let exited = DispatchSemaphore(value: 0)

    /// Creates the epoll instance and registers the wake-up eventfd and the listener; call `start()` to run.
    init(index: Int, server: HTTPServerCore, listener: ListenerHandle, requestPrefix: String) throws {
        self.index = index
        self.server = server
        self.listener = listener
        self.requestLoopPrefix = Array((requestPrefix + String(index, radix: 36) + ".").utf8)
        epfd = Epoll.create()
        guard epfd >= 0 else { throw SocketError.eventLoopFailed("epoll_create1: \(SocketError.errnoText)") }
        wakeFD = Epoll.eventFD()
        guard wakeFD >= 0 else {
            SystemCalls.close(epfd)
            throw SocketError.eventLoopFailed("eventfd: \(SocketError.errnoText)")
        }
        // Deadlines are checked a few times per shortest timeout, at most every 250 ms.
        let t = server.configuration.timeouts
        let shortest = min(t.headerRead, t.idleKeepAlive, t.bodyRead, t.write)
        tickNanoseconds = UInt64(min(0.25, max(0.005, shortest / 4)) * 1e9)
        _ = Epoll.control(epfd, Epoll.ctlAdd, wakeFD, events: Epoll.input, token: Self.wakeToken)
        guard Epoll.control(epfd, Epoll.ctlAdd, listener.fd, events: Epoll.input | Epoll.exclusive, token: Self.listenerToken) == 0
        else {
            // Every stored property is set, so deinit runs and closes epfd and wakeFD.
            throw SocketError.eventLoopFailed("epoll_ctl(listener): \(SocketError.errnoText)")
        }
        listening = true
    }

    deinit {
        SystemCalls.close(epfd)
        SystemCalls.close(wakeFD)
    }

    /// Starts the loop's thread.
    func start() {
        let thread = Thread { [self] in self.run() }
        thread.name = "galleryd.http.loop.\(index)"
        thread.start()
    }

    /// Runs `task` on the loop thread. Once the loop has stopped it runs on the caller's thread instead
    /// (there is nothing left to race with), so cleanup work is never lost.
    func execute(_ task: @escaping () -> Void) {
        var wake = false
        let inline: Bool = taskLock.withLock {
            if stopped { return true }
            tasks.append(task)
            if !wakePending {
                wakePending = true
                wake = true
            }
            return false
        }
        if inline {
            task()
            return
        }
        if wake {
            var one: UInt64 = 1
            _ = SystemCalls.write(wakeFD, &one, 8)
        }
    }

    /// A short id unique within the server: a per-server prefix, the loop and a counter.
    func nextRequestID() -> String {
        requestCounter &+= 1
        // One allocation: this runs for every request.
        let counter = requestCounter
        var digits = 1
        var rest = counter / 36
        while rest > 0 {
            digits += 1
            rest /= 36
        }
        let head = requestLoopPrefix
        return String(unsafeUninitializedCapacity: head.count + digits) { out in
            for (i, byte) in head.enumerated() { out[i] = byte }
            var value = counter
            for i in stride(from: head.count + digits - 1, through: head.count, by: -1) {
                let digit = UInt8(truncatingIfNeeded: value % 36)
                out[i] = digit < 10 ? 0x30 + digit : 0x57 + digit
                value /= 36
            }
            return head.count + digits
        }
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
        if listening {
            listening = false
            _ = Epoll.control(epfd, Epoll.ctlDel, listener.fd, events: 0, token: 0)
        }
        if !listenerReleased {
            listenerReleased = true
            listener.release()
        }
    }

    private func run() {
        let events = UnsafeMutableRawPointer.allocate(byteCount: Epoll.eventSize * Int(Self.maxEvents), alignment: 8)
        defer { events.deallocate() }
        var nextTick = now + tickNanoseconds
        while !(forceStop || (draining && connectionCount == 0)) {
            let waitMs = nextTick > now ? Int32(min((nextTick - now) / 1_000_000 + 1, 1000)) : 0
            let n = Epoll.wait(epfd, events, Self.maxEvents, waitMs)
            now = monotonicNanoseconds()
            if n < 0 && errno != EINTR {
                server.logger.critical("epoll_wait failed: \(SocketError.errnoText)")
                break
            }
            var i = 0
            while i < Int(n) {
                let (mask, token) = Epoll.event(events, i)
                i += 1
                switch token {
                case Self.listenerToken:
                    acceptConnections()
                case Self.wakeToken:
                    runTasks()
                default:
                    let fd = Int(token)
                    if fd < connections.count, let connection = connections[fd] { connection.handle(events: mask) }
                }
            }
            if now >= nextTick {
                checkDeadlines()
                nextTick = now + tickNanoseconds
            }
        }
        for case let connection? in connections { connection.close() }
        stopListening()
        let leftovers: [() -> Void] = taskLock.withLock {
            stopped = true
            defer { tasks = [] }
            return tasks
        }
        for task in leftovers { task() }
        turnLock.withLock { exitedFlag = true }
        exited.signal()
    }

    private func runTasks() {
        var value: UInt64 = 0
        _ = SystemCalls.read(wakeFD, &value, 8)
        let batch: [() -> Void] = taskLock.withLock {
            wakePending = false
            defer { tasks.removeAll(keepingCapacity: true) }
            return tasks
        }
        for task in batch { task() }
    }

    private func checkDeadlines() {
        let turned = now
        turnLock.withLock { lastTurnValue = turned }
        if acceptPausedUntil != 0 && now >= acceptPausedUntil && !listenerReleased {
            acceptPausedUntil = 0
            if !listening && Epoll.control(epfd, Epoll.ctlAdd, listener.fd, events: Epoll.input | Epoll.exclusive, token: Self.listenerToken) == 0 {
                listening = true
            }
        }
        for case let connection? in connections where connection.deadline != 0 && connection.deadline <= now {
            connection.timedOut()
        }
    }

    private func acceptConnections() {
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
                    _ = Epoll.control(epfd, Epoll.ctlDel, listener.fd, events: 0, token: 0)
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
                let canned =
                    "HTTP/1.1 503 Service Unavailable\r\nServer: galleryd\r\nContent-Length: 20\r\nConnection: close\r\nRetry-After: 1\r\n\r\ntoo many connections"
                _ = canned.utf8.withContiguousStorageIfAvailable {
                    SystemCalls.send(fd, $0.baseAddress, $0.count, dontWait: true)
                }
                SystemCalls.close(fd)
                server.logger.warning("connection refused: maxConnections (\(server.configuration.maxConnections)) reached")
                continue
            }
            SystemCalls.configureConnection(fd)
            let connection = HTTPConnection(fd: fd, loop: self, server: server, remoteAddress: Self.describe(&address))
            let slot = Int(fd)
            if slot >= connections.count {
                connections.append(contentsOf: repeatElement(nil, count: max(slot + 1 - connections.count, connections.count)))
            }
            connections[slot] = connection
            connectionCount += 1
            server.observer?.connectionOpened()
            let mask = Epoll.input | Epoll.output | Epoll.readHangUp | Epoll.edgeTriggered
            if Epoll.control(epfd, Epoll.ctlAdd, fd, events: mask, token: UInt64(fd)) != 0 {
                server.logger.error("epoll_ctl(add) failed: \(SocketError.errnoText)")
                connection.close()
                continue
            }
            // Requests often arrive with the connection: try reading right away.
            connection.drive()
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
                    return "\(String(cString: host)):\(UInt16(bigEndian: sin.pointee.sin_port))"
                }
            }
        case AF_INET6:
            return withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { sin6 in
                    var addr = sin6.pointee.sin6_addr
                    inet_ntop(AF_INET6, &addr, &host, socklen_t(host.count))
                    return "[\(String(cString: host))]:\(UInt16(bigEndian: sin6.pointee.sin6_port))"
                }
            }
        default:
            return "unknown"
        }
    }
}
