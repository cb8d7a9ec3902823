import Foundation
import Logging

/// galleryd's HTTP/1.1 server: BSD sockets, one epoll loop thread per core, handlers on a bounded pool.
///
/// ```swift
/// let server = HTTPServer(configuration: config, router: router, logger: logger)
/// try server.start()      // binds, returns at once
/// // … on SIGTERM:
/// server.shutdown()       // stop accepting, finish in-flight requests
/// server.wait()           // returns when drained or after drainTimeout
/// ```
public final class HTTPServer: @unchecked Sendable {
    private let core: HTTPServerCore
    private let lock = Lock()
    private var loops: [EventLoop] = []
    private var listener: ListenerHandle?
    private var boundPort = 0
    private var started = false
    private var shutdownRequested = false
    private var shutdownTime: UInt64 = 0
    private var finished = false
    private let shutdownSignal = DispatchSemaphore(value: 0)

    /// A server that is not yet listening. `router` must not change after `start()`.
    public init(
        configuration: HTTPServerConfiguration, router: HTTPRouter, logger: Logger = Logger(label: "galleryd.http"),
        observer: HTTPServerObserver? = nil
    ) {
        core = HTTPServerCore(configuration: configuration, router: router, logger: logger, observer: observer)
    }

    /// The port the server listens on (the kernel's choice when the configuration said 0); 0 before `start()`.
    public var port: Int { lock.withLock { boundPort } }

    /// How the loops and the handler pool are moving, for the systemd watchdog.
    public var progress: HTTPServerProgress {
        let loops: [EventLoop] = lock.withLock { started && !finished ? self.loops : [] }
        let now = monotonicNanoseconds()
        let oldest = loops.map { $0.lastTurn }.min().map { now > $0 ? Double(now - $0) / 1e9 : 0 } ?? 0
        let pool = core.pool.progress
        return HTTPServerProgress(oldestLoopTurnAge: oldest, queuedHandlers: pool.queued, startedHandlers: pool.started)
    }

    /// Access log lines dropped because the output was slower than the traffic (or refused them).
    public var accessLogDroppedLines: Int { core.accessLog?.dropped ?? 0 }

    /// Binds (or adopts `listenFileDescriptor`), starts the event loops and returns.
    /// Also ignores SIGPIPE process-wide: sendfile has no MSG_NOSIGNAL.
    public func start() throws {
        try lock.withLock {
            guard !started else { throw SocketError.alreadyStarted }
            signal(SIGPIPE, SIG_IGN)
            let configuration = core.configuration
            let loopCount = max(1, configuration.eventLoopThreads)
            let listener: ListenerHandle
            if let fd = configuration.listenFileDescriptor {
                listener = try ListenerHandle.adopt(fd: fd, users: loopCount)
            } else {
                listener = try ListenerHandle.bind(
                    host: configuration.host, port: configuration.port, backlog: configuration.backlog, users: loopCount)
            }
            let prefix = HTTPRequestIDGenerator.randomServerPrefix()
            var created: [EventLoop] = []
            do {
                for index in 0..<loopCount {
                    created.append(try EventLoop(index: index, server: core, listener: listener, requestPrefix: prefix))
                }
            } catch {
                for loop in created { loop.forceClose() }
                for _ in created.count..<loopCount { listener.release() }
                throw error
            }
            loops = created
            self.listener = listener
            boundPort = listener.port
            started = true
            core.accessLog?.start()
            for loop in created { loop.start() }
            core.logger.info(
                "listening",
                metadata: ["host": "\(configuration.host)", "port": "\(listener.port)", "loops": "\(loopCount)"])
        }
    }

    /// Stops accepting, closes idle keep-alive connections and lets in-flight requests finish
    /// (their responses carry `Connection: close`). Thread-safe and idempotent; returns at once.
    public func shutdown() {
        let loops: [EventLoop]? = lock.withLock {
            if shutdownRequested { return nil }
            shutdownRequested = true
            shutdownTime = monotonicNanoseconds()
            return self.loops
        }
        guard let loops else { return }
        // Refuse new connections now; the loops deregister and close the socket as they drain.
        lock.withLock { listener }?.stopAccepting()
        core.logger.info("shutting down", metadata: ["drainTimeout": "\(core.configuration.drainTimeout)"])
        for loop in loops { loop.execute { loop.beginDrain() } }
        shutdownSignal.signal()
    }

    /// Blocks until `shutdown()` has been called and every connection is closed, or until
    /// `drainTimeout` after the shutdown, when the remaining connections are closed by force.
    /// Returns at once for a server that never started.
    public func wait() {
        let loops: [EventLoop] = lock.withLock { started ? self.loops : [] }
        if loops.isEmpty { return }
        shutdownSignal.wait()
        shutdownSignal.signal()  // let other waiters through
        let deadline = lock.withLock { shutdownTime } + UInt64(max(0, core.configuration.drainTimeout) * 1e9)
        for loop in loops {
            let now = monotonicNanoseconds()
            let remaining = deadline > now ? deadline - now : 0
            if loop.exited.wait(timeout: .now() + .nanoseconds(Int(min(remaining, UInt64(Int.max))))) == .timedOut {
                core.logger.warning("drain timeout: closing remaining connections", metadata: ["loop": "\(loop.index)"])
                loop.execute { loop.forceClose() }
                loop.exited.wait()
            }
            loop.exited.signal()  // keep it signalled for another wait()
        }
        let first: Bool = lock.withLock {
            defer { finished = true }
            return !finished
        }
        if first {
            core.accessLog?.stop()
            core.pool.stop()
            core.logger.info("stopped")
        }
    }
}
