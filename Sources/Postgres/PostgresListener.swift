import Foundation

/// Receives `NOTIFY`s on a dedicated connection and hands them to `handler` on its own thread.
///
/// It `LISTEN`s to every channel, waits on the connection's socket with `poll`, and when the session
/// dies (server restart) reconnects by itself with exponential backoff and listens again.
/// Notifications sent while it was disconnected are lost: `onListen` runs after every successful
/// (re)connect so the owner can catch up (e.g. look for queued jobs), and `onUnlisten` runs as soon
/// as a session is found dead, before any reconnect, so an owner that keeps state current from the
/// notifications can stop trusting it until `onListen` has caught up.
public final class PostgresListener: Sendable {
    private let worker: ListenerWorker

    /// Starts listening to `channels` in a background thread. `handler(channel, payload)`,
    /// `onListen` and `onUnlisten` run on that thread, one call at a time; keep them short.
    public init(
        url: String, channels: [String], settings: PostgresListenerSettings = PostgresListenerSettings(),
        onListen: (@Sendable () -> Void)? = nil, onUnlisten: (@Sendable () -> Void)? = nil,
        handler: @escaping @Sendable (_ channel: String, _ payload: String) -> Void
    ) {
        worker = ListenerWorker(
            url: url, channels: channels, settings: settings, onListen: onListen, onUnlisten: onUnlisten,
            handler: handler)
        let thread = Thread { [worker] in worker.run() }
        thread.name = "postgres-listener"
        worker.thread = thread
        thread.start()
    }

    deinit { worker.stop() }

    /// Whether the listener is connected and its `LISTEN`s are in place.
    public var isListening: Bool { worker.isListening }

    /// Waits until the listener is listening, up to `timeout` seconds; returns whether it is.
    @discardableResult
    public func waitUntilListening(timeout: Double) -> Bool { worker.waitUntilListening(timeout: timeout) }

    /// Stops listening and closes the connection; returns once the thread has finished (unless called
    /// from the handler itself). Safe to call more than once.
    public func stop() { worker.stop() }
}

/// Reconnect pacing and health checks of a `PostgresListener`, with defaults and reasons.
public struct PostgresListenerSettings: Sendable {
    /// First pause after a failed connect, in seconds. Default 0.1: a restart takes about a second.
    public var initialBackoff: Double
    /// Longest pause between connect attempts, in seconds. Default 5: notice a returning server
    /// quickly without hammering one that is down.
    public var maximumBackoff: Double
    /// Seconds of silence after which the listener checks the session with `SELECT 1`. Default 30:
    /// detects a half-open connection (no FIN ever arrives) within a minute.
    public var healthCheckInterval: Double
    /// Seconds to wait for a connection to open. Default 10.
    public var connectTimeout: Int

    /// Settings with the defaults above.
    public init(
        initialBackoff: Double = 0.1, maximumBackoff: Double = 5, healthCheckInterval: Double = 30,
        connectTimeout: Int = 10
    ) {
        self.initialBackoff = initialBackoff
        self.maximumBackoff = maximumBackoff
        self.healthCheckInterval = healthCheckInterval
        self.connectTimeout = connectTimeout
    }
}

/// The state the listener thread owns; separate from `PostgresListener` so that dropping the last
/// reference to the listener stops the thread.
// @unchecked: its flags are under `condition` (it waits, which Mutex cannot do); `thread` is set before it starts.
private final class ListenerWorker: @unchecked Sendable {
    let url: String
    let channels: [String]
    let settings: PostgresListenerSettings
    let onListen: (@Sendable () -> Void)?
    let onUnlisten: (@Sendable () -> Void)?
    let handler: @Sendable (String, String) -> Void
    var thread: Thread?

    private let condition = NSCondition()
    private var listening = false
    private var stopping = false
    private var finished = false
    /// Written to by `stop()` to wake the thread out of `poll`.
    private var wakeRead: Int32 = -1
    private var wakeWrite: Int32 = -1

    init(
        url: String, channels: [String], settings: PostgresListenerSettings, onListen: (@Sendable () -> Void)?,
        onUnlisten: (@Sendable () -> Void)?, handler: @escaping @Sendable (String, String) -> Void
    ) {
        self.url = url
        self.channels = channels
        self.settings = settings
        self.onListen = onListen
        self.onUnlisten = onUnlisten
        self.handler = handler
        var fds: [Int32] = [-1, -1]
        if pipe(&fds) == 0 {
            wakeRead = fds[0]
            wakeWrite = fds[1]
            _ = fcntl(wakeRead, F_SETFD, FD_CLOEXEC)
            _ = fcntl(wakeWrite, F_SETFD, FD_CLOEXEC)
        }
    }

    deinit {
        if wakeRead >= 0 { close(wakeRead) }
        if wakeWrite >= 0 { close(wakeWrite) }
    }

    var isListening: Bool {
        condition.lock()
        defer { condition.unlock() }
        return listening
    }

    func waitUntilListening(timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while !listening && !stopping {
            if !condition.wait(until: deadline) { break }
        }
        return listening
    }

    func stop() {
        condition.lock()
        let alreadyStopping = stopping
        stopping = true
        condition.broadcast()
        condition.unlock()
        if !alreadyStopping {
            var byte: UInt8 = 1
            _ = write(wakeWrite, &byte, 1)
        }
        guard Thread.current != thread else { return }
        condition.lock()
        while !finished { condition.wait() }
        condition.unlock()
    }

    private var isStopping: Bool {
        condition.lock()
        defer { condition.unlock() }
        return stopping
    }

    private func setListening(_ value: Bool) {
        condition.lock()
        listening = value
        condition.broadcast()
        condition.unlock()
    }

    func run() {
        var backoff = settings.initialBackoff
        while !isStopping {
            let connection: PostgresConnection
            do {
                connection = try connectAndListen()
            } catch {
                postgresLogger.warning(
                    "PostgreSQL listener could not connect, retrying",
                    metadata: ["error": "\(error)", "in": "\(backoff)s"])
                sleepUnlessStopped(backoff)
                backoff = min(backoff * 2, settings.maximumBackoff)
                continue
            }
            backoff = settings.initialBackoff
            setListening(true)
            onListen?()
            pump(connection)
            onUnlisten?()
            setListening(false)
            connection.close()
            if !isStopping { postgresLogger.notice("PostgreSQL listener lost its connection, reconnecting") }
        }
        condition.lock()
        finished = true
        condition.broadcast()
        condition.unlock()
    }

    private func connectAndListen() throws -> PostgresConnection {
        let connection = try PostgresConnection(
            url: url,
            settings: PostgresConnectionSettings(
                connectTimeout: settings.connectTimeout, statementCacheCapacity: 0, reconnectsOnFailure: false))
        for channel in channels {
            try connection.execute("LISTEN \(try connection.quoteIdentifier(channel))")
        }
        return connection
    }

    /// Delivers notifications until the session dies or `stop()` is called.
    private func pump(_ connection: PostgresConnection) {
        guard let socket = try? connection.socketDescriptor() else { return }
        let interval = Int32(min(settings.healthCheckInterval * 1000, Double(Int32.max)))
        while !isStopping {
            var fds = [
                pollfd(fd: socket, events: Int16(POLLIN), revents: 0),
                pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0),
            ]
            let ready = poll(&fds, 2, interval)
            if ready < 0 && errno == EINTR { continue }
            if isStopping { return }
            do {
                if ready == 0 {
                    try connection.query("SELECT 1")
                }
                for notification in try connection.receiveNotifications() {
                    handler(notification.channel, notification.payload)
                }
            } catch {
                return
            }
        }
    }

    private func sleepUnlessStopped(_ seconds: Double) {
        var fd = pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)
        _ = poll(&fd, 1, Int32(seconds * 1000))
    }
}
