import Foundation

/// A bounded, thread-safe pool of `PostgresConnection`s.
///
/// Connections open lazily up to `size`. A caller that finds none free waits up to `acquireTimeout`
/// and then gets `PostgresError.poolTimeout` ("database busy"). Connections whose session died
/// (server restart) are noticed when handed out or given back and replaced; a statement that fails
/// because its session died outside a transaction is re-run once on a fresh session when that cannot
/// act twice (see `PostgresRetry`).
///
/// All calls block the calling thread (libpq is blocking): call from request-handler or worker
/// threads, never from socket threads.
// @unchecked: the pool's state is guarded by `condition` (acquire waits on it, which Mutex cannot do).
public final class PostgresPool: @unchecked Sendable {
    /// The configuration the pool was made with.
    public let configuration: PostgresPoolConfiguration
    private let condition = NSCondition()
    private var idle: [PostgresConnection] = []
    private var open = 0
    private var inUse = 0
    private var waiting = 0
    private var handedOut = 0
    private var isShutDown = false

    /// Makes a pool; no connection is opened until one is needed.
    public init(configuration: PostgresPoolConfiguration) {
        precondition(configuration.size > 0, "a pool needs at least one connection")
        self.configuration = configuration
    }

    deinit { shutdown() }

    /// The pool's occupancy right now.
    public var stats: PostgresPoolStats {
        condition.lock()
        defer { condition.unlock() }
        return PostgresPoolStats(
            size: configuration.size, open: open, inUse: inUse, idle: idle.count, waiting: waiting, handedOut: handedOut
        )
    }

    /// A connection bound to one pool for the code `sharingTransaction` runs.
    // @unchecked: its connection is used only by the task that pinned it (through the task-local `pinned`).
    final class PinnedConnection: @unchecked Sendable {
        let pool: ObjectIdentifier
        let connection: PostgresConnection
        /// What `afterCommit` deferred to the end of the transaction; only its own call chain touches it.
        var afterCommit: [() -> Void] = []

        init(pool: ObjectIdentifier, connection: PostgresConnection) {
            self.pool = pool
            self.connection = connection
        }
    }

    /// The connection `sharingTransaction` pinned for the current (synchronous) call chain.
    @TaskLocal static var pinned: PinnedConnection?

    /// Runs `body` in one transaction that every call on this pool made by `body` on this thread
    /// joins: `withConnection`, `query` and `transaction` use its connection, and their
    /// transactions become savepoints. `COMMIT` when `body` returns, `ROLLBACK` when it throws:
    /// all or nothing, for work (a Parse batch with `transaction: true`) spread over services
    /// that each use the pool.
    @discardableResult
    public func sharingTransaction<T>(_ body: () throws -> T) throws -> T {
        var committed: [() -> Void] = []
        let result = try transaction { connection in
            let pinned = PinnedConnection(pool: ObjectIdentifier(self), connection: connection)
            defer { committed = pinned.afterCommit }
            return try Self.$pinned.withValue(pinned) { try body() }
        }
        // Nested in another sharing transaction of this pool: committed only when that one is.
        for action in committed { afterCommit(action) }
        return result
    }

    /// Runs `action` once what the caller wrote is committed: at once outside `sharingTransaction`
    /// (each call on the pool commits by itself), else after that transaction's `COMMIT`, and never
    /// when it rolls back. For work that must see the write, such as re-reading change sequences.
    public func afterCommit(_ action: @escaping () -> Void) {
        if let pinned = Self.pinned, pinned.pool == ObjectIdentifier(self) {
            pinned.afterCommit.append(action)
        } else {
            action()
        }
    }

    /// Runs `body` with a connection of its own, then gives the connection back (rolling back a
    /// transaction `body` left open). Inside `sharingTransaction`, `body` gets that transaction's connection.
    @discardableResult
    public func withConnection<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        if let pinned = Self.pinned, pinned.pool == ObjectIdentifier(self) { return try body(pinned.connection) }
        let connection = try acquire()
        defer { release(connection) }
        return try body(connection)
    }

    /// Runs `body` in a transaction on one connection: `COMMIT` when it returns, `ROLLBACK` when it throws.
    @discardableResult
    public func transaction<T>(
        isolation: PostgresIsolationLevel = .readCommitted, _ body: (PostgresConnection) throws -> T
    ) throws -> T {
        try transaction(isolation: isolation, retryingSerializationFailures: 0, body)
    }

    /// Like `transaction(isolation:_:)`, but when the transaction fails with `serializationFailure`
    /// or `deadlockDetected` it runs `body` again, up to `retries` more times (after a short random
    /// pause), so `body` must be safe to repeat.
    @discardableResult
    public func transaction<T>(
        isolation: PostgresIsolationLevel = .readCommitted, retryingSerializationFailures retries: Int,
        _ body: (PostgresConnection) throws -> T
    ) throws -> T {
        var attempt = 0
        while true {
            do {
                return try withConnection { try $0.transaction(isolation: isolation, body) }
            } catch let error as PostgresError
                where attempt < retries
                && (error.sqlState == .serializationFailure || error.sqlState == .deadlockDetected)
            {
                attempt += 1
                usleep(UInt32.random(in: 1_000...5_000) * UInt32(attempt))
            }
        }
    }

    /// Runs one statement on any free connection (see `PostgresConnection.query`).
    @discardableResult
    public func query(_ sql: String, _ binds: [PostgresBindable?] = [], retry: PostgresRetry = .never) throws
        -> PostgresResult
    {
        try withConnection { try $0.query(sql, binds, retry: retry) }
    }

    /// Runs parameterless SQL on any free connection (see `PostgresConnection.execute`).
    public func execute(_ sql: String, retry: PostgresRetry = .never) throws {
        try withConnection { try $0.execute(sql, retry: retry) }
    }

    /// Sends a notification on any free connection (see `PostgresConnection.notify`).
    public func notify(_ channel: String, _ payload: String = "") throws {
        try withConnection { try $0.notify(channel, payload) }
    }

    /// Closes idle connections and refuses new work (`connectionClosed`); connections in use close
    /// when given back. For a clean process exit.
    public func shutdown() {
        condition.lock()
        isShutDown = true
        let closing = idle
        idle.removeAll()
        open -= closing.count
        condition.broadcast()
        condition.unlock()
        for connection in closing { connection.close() }
    }

    // MARK: Acquire and release

    private func acquire() throws -> PostgresConnection {
        var started: Date?
        condition.lock()
        while true {
            if isShutDown {
                condition.unlock()
                throw PostgresError.connectionClosed(message: "the connection pool was shut down")
            }
            if let connection = idle.popLast() {
                inUse += 1
                handedOut += 1
                condition.unlock()
                return try revive(connection)
            }
            if open < configuration.size {
                open += 1
                inUse += 1
                handedOut += 1
                condition.unlock()
                do {
                    return try PostgresConnection(url: configuration.url, settings: configuration.connectionSettings)
                } catch {
                    discardSlot()
                    throw error
                }
            }
            let since = started ?? Date()
            started = since
            waiting += 1
            let signalled = condition.wait(until: since.addingTimeInterval(configuration.acquireTimeout))
            waiting -= 1
            if !signalled && idle.isEmpty && open >= configuration.size && !isShutDown {
                condition.unlock()
                throw PostgresError.poolTimeout(waited: Date().timeIntervalSince(since))
            }
        }
    }

    /// Returns `connection` if its session is alive, otherwise re-establishes it. Only connections
    /// idle for a while are checked (a non-blocking read): a session that died just now is still
    /// caught when its statement fails and is re-run on a fresh session.
    private func revive(_ connection: PostgresConnection) throws -> PostgresConnection {
        let idleNanoseconds = DispatchTime.now().uptimeNanoseconds &- connection.idleSince
        if idleNanoseconds < Self.idleCheckAfterNanoseconds && connection.isOpen { return connection }
        if connection.checkIdle() { return connection }
        postgresLogger.notice("replacing a dead PostgreSQL connection from the pool")
        do {
            try connection.reconnect()
            return connection
        } catch {
            discardSlot()
            throw error
        }
    }

    /// How long a connection may sit idle before it is checked when handed out: 1 s.
    private static let idleCheckAfterNanoseconds: UInt64 = 1_000_000_000

    private func discardSlot() {
        condition.lock()
        open -= 1
        inUse -= 1
        condition.signal()
        condition.unlock()
    }

    private func release(_ connection: PostgresConnection) {
        if connection.isOpen && connection.isInTransaction {
            // The caller began a transaction and never ended it: never hand that state to the next caller.
            try? connection.execute("ROLLBACK")
        }
        let reusable = connection.isOpen && !connection.isInTransaction
        condition.lock()
        inUse -= 1
        let keep = reusable && !isShutDown
        if keep {
            connection.idleSince = DispatchTime.now().uptimeNanoseconds
            idle.append(connection)
        } else {
            open -= 1
        }
        condition.signal()
        condition.unlock()
        if !keep { connection.close() }
    }
}
