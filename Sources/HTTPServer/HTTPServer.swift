import Foundation
import Logging
import Synchronization

/// galleryd's HTTP/1.1 server: BSD sockets, one epoll loop thread per core, handlers on a bounded pool.
///
/// ```swift
/// let server = HTTPServer(configuration: config, router: router, logger: logger)
/// try server.start()      // binds, returns at once
/// // … on SIGTERM:
/// server.shutdown()       // stop accepting, finish in-flight requests
/// server.wait()           // returns when drained or after drainTimeout
/// ```
public final class HTTPServer: Sendable {
    private let core: HTTPServerCore
    private let state = Mutex(State())
    private let shutdownSignal = DispatchSemaphore(value: 0)

    /// The server's lifecycle, under the mutex (taken at start, shutdown and wait, never per request).
    private struct State {
        var loops: [EventLoop] = []
        var listener: ListenerHandle?
        var boundPort = 0
        var started = false
        var shutdownRequested = false
        var shutdownTime: UInt64 = 0
        var finished = false
    }

    /// A server that is not yet listening. `router` must not change after `start()`.
    public init(
        configuration: HTTPServerConfiguration, router: HTTPRouter, logger: Logger = Logger(label: "galleryd.http"),
        observer: HTTPServerObserver? = nil
    ) {
        core = HTTPServerCore(configuration: configuration, router: router, logger: logger, observer: observer)
    }

    /// The port the server listens on (the kernel's choice when the configuration said 0); 0 before `start()`.
    public var port: Int { state.withLock { $0.boundPort } }

    /// How the loops and the handler pool are moving, for the systemd watchdog.
    public var progress: HTTPServerProgress {
        let loops = state.withLock { $0.started && !$0.finished ? $0.loops : [] }
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
        try state.withLock { state in
            guard !state.started else { throw SocketError.alreadyStarted }
            signal(SIGPIPE, SIG_IGN)
            let configuration = core.configuration
            let loopCount = max(1, configuration.eventLoopThreads)
            let listener: ListenerHandle
            if let fd = configuration.listenFileDescriptor {
                listener = try ListenerHandle.adopt(fd: fd, users: loopCount)
            } else {
                listener = try ListenerHandle.bind(
                    host: configuration.host, port: configuration.port, backlog: configuration.backlog, users: loopCount
                )
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
            state.loops = created
            state.listener = listener
            state.boundPort = listener.port
            state.started = true
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
        let loops: [EventLoop]? = state.withLock { state in
            if state.shutdownRequested { return nil }
            state.shutdownRequested = true
            state.shutdownTime = monotonicNanoseconds()
            return state.loops
        }
        guard let loops else { return }
        // Refuse new connections now; the loops deregister and close the socket as they drain.
        state.withLock { $0.listener }?.stopAccepting()
        core.logger.info("shutting down", metadata: ["drainTimeout": "\(core.configuration.drainTimeout)"])
        for loop in loops { loop.execute { loop.beginDrain() } }
        shutdownSignal.signal()
    }

    /// Blocks until `shutdown()` has been called and every connection is closed, or until
    /// `drainTimeout` after the shutdown, when the remaining connections are closed by force.
    /// Returns at once for a server that never started.
    public func wait() {
        let loops = state.withLock { $0.started ? $0.loops : [] }
        if loops.isEmpty { return }
        shutdownSignal.wait()
        shutdownSignal.signal()  // let other waiters through
        let deadline = state.withLock { $0.shutdownTime } + UInt64(max(0, core.configuration.drainTimeout) * 1e9)
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
        let first = state.withLock { state in
            defer { state.finished = true }
            return !state.finished
        }
        if first {
            core.accessLog?.stop()
            core.pool.stop()
            core.logger.info("stopped")
        }
    }
}
