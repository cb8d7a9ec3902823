import CLibpq
import Foundation
import Logging

/// One session with PostgreSQL over libpq, owning the `PGconn` (finished in `deinit`, also after a
/// failed connect).
///
/// Every call blocks the calling thread until the server answers: call it from worker or
/// request-handler threads, never from threads that serve sockets. A connection is not thread-safe;
/// use it from one thread at a time (`PostgresPool` hands each to one caller).
///
/// Statements are prepared once per SQL text and parameter types and then executed by name
/// (`PQprepare` + `PQexecPrepared`); `PostgresStatementCache` keeps their names, bounded by
/// `statementCacheCapacity`. Values are only ever sent as parameters, never spliced into SQL.
/// Transactions are in `PostgresConnection+Transactions.swift`.
///
/// When the server went away (restart, terminated backend) a statement issued outside a transaction
/// is re-run once on a fresh session (`PQreset`) only if re-running it cannot act twice: libpq could
/// not send it at all, or its caller said so (`retry: .safe`, for reads and `BEGIN`). A write that
/// was sent may have committed before the connection dropped, and a second run would act on changed
/// data (a trash `UPDATE` matching 0 rows the second time), so `connectionClosed` is thrown instead
/// and the caller answers "try again" (503) to a client whose requests are idempotent. Before
/// sending a `.never` statement, the session is checked without blocking for a termination the
/// server already announced, so a restart seen in time still costs nothing. Inside a transaction
/// the error is always thrown, since the transaction is lost.
public final class PostgresConnection {
    private var handle: OpaquePointer?
    private let settings: PostgresConnectionSettings
    private var statements: PostgresStatementCache
    /// Set when the server ended the session with an error but libpq still reports the socket open.
    private var sessionEnded = false
    /// Set when the session died inside a transaction; the next call reports it once, then reconnects.
    private var lostInsideTransaction = false
    /// How many savepoints deep the transaction in progress is (`transaction` inside `transaction`).
    var savepointDepth = 0
    /// Whether the statement being run was handed to the server (libpq returned a result rather
    /// than failing to send): if the session then dies, the statement may have run.
    private var statementMayHaveRun = false

    /// Whether a statement that failed because the session died outside a transaction is re-run once
    /// on a fresh session. Turn it off while relying on session state (advisory locks, `SET`), which a
    /// fresh session would not have.
    public var reconnectsOnFailure: Bool

    /// Opens a session from a `postgresql://` URL or a `key=value` conninfo string, and sets the
    /// session up (UTC time zone, ISO dates, exact floats, UTF-8, optional statement timeout).
    /// Throws `connectFailed` with libpq's message.
    public init(url: String, settings: PostgresConnectionSettings = PostgresConnectionSettings()) throws {
        self.settings = settings
        statements = PostgresStatementCache(capacity: settings.statementCacheCapacity)
        reconnectsOnFailure = settings.reconnectsOnFailure
        handle = Self.connect(url: url, connectTimeout: settings.connectTimeout)
        guard PQstatus(handle) == CONNECTION_OK else {
            throw PostgresError.connectFailed(message: Self.errorMessage(handle))
        }
        PQsetNoticeProcessor(handle, postgresNoticeProcessor, nil)
        try setUpSession()
    }

    deinit {
        if let handle { PQfinish(handle) }
    }

    /// Closes the session now instead of at `deinit`; later calls throw `connectionClosed`.
    public func close() {
        if let handle { PQfinish(handle) }
        handle = nil
        statements.removeAll()
    }

    /// Whether the session is believed alive (libpq's status, without a round trip).
    public var isOpen: Bool {
        handle != nil && !sessionEnded && PQstatus(handle) == CONNECTION_OK
    }

    /// The server process id of this session (for `pg_terminate_backend`, logs).
    public var backendPID: Int32 { handle.map { PQbackendPID($0) } ?? 0 }

    /// The server version as a number, e.g. 150018 for 15.18.
    public var serverVersion: Int { handle.map { Int(PQserverVersion($0)) } ?? 0 }

    /// Whether a transaction (or a failed one) is open on this session.
    public var isInTransaction: Bool {
        guard let handle else { return false }
        let status = PQtransactionStatus(handle)
        return status == PQTRANS_INTRANS || status == PQTRANS_INERROR || status == PQTRANS_ACTIVE
    }

    /// Number of statements currently prepared on the session.
    public var preparedStatementCount: Int { statements.count }

    // MARK: Statements

    /// Runs one statement with `binds` as `$1`, `$2`, … (`nil` is NULL) and returns its rows.
    /// `retry: .safe` lets a statement that only reads, or is idempotent, be re-run on a fresh session
    /// when the session died after it was sent (see `PostgresRetry`).
    /// Throws `server` for SQL errors, `connectionClosed` when the session died inside a transaction
    /// (or could not be re-established, or the statement may have run), `invalidParameter` for text
    /// with a NUL byte.
    @discardableResult
    public func query(_ sql: String, _ binds: [PostgresBindable?] = [], retry: PostgresRetry = .never) throws
        -> PostgresResult
    {
        let parameters = try PostgresParameters(binds)
        return try withReconnect(retry) {
            do {
                return try run(sql, parameters)
            } catch let error as PostgresError where Self.isStalePlan(error) && !isInTransaction {
                // `select *` after the table changed: prepare again and retry once.
                forgetStatement(sql, parameters)
                return try run(sql, parameters)
            }
        }
    }

    /// Runs parameterless SQL, possibly several statements separated by `;` (migrations, `BEGIN`).
    /// Never pass values in here: use `query` with binds. `retry` as for `query`.
    public func execute(_ sql: String, retry: PostgresRetry = .never) throws {
        try withReconnect(retry) {
            let handle = try openHandle()
            statementMayHaveRun = false
            let result = PQexec(handle, sql)
            statementMayHaveRun = result != nil
            _ = try check(result)
        }
    }

    /// Sends `NOTIFY channel, payload` (through `pg_notify`, so both are parameters). Delivered when
    /// the surrounding transaction, if any, commits.
    public func notify(_ channel: String, _ payload: String = "") throws {
        try query("select pg_notify($1, $2)", [channel, payload])
    }

    // MARK: Health

    /// When the pool last gave this connection back (monotonic nanoseconds).
    var idleSince: UInt64 = 0

    /// Reads whatever the server sent while the session was idle, without blocking, and says whether
    /// the session is still usable (the pool checks this before handing a connection out).
    func checkIdle() -> Bool {
        guard let handle, !sessionEnded, PQstatus(handle) == CONNECTION_OK else { return false }
        guard PQconsumeInput(handle) == 1 else { return false }
        // Drop notifications nobody listens for on pooled sessions.
        while let notification = PQnotifies(handle) { PQfreemem(notification) }
        return PQstatus(handle) == CONNECTION_OK && PQtransactionStatus(handle) == PQTRANS_IDLE
    }

    /// Re-establishes the session with the same parameters and sets it up again.
    func reconnect() throws {
        guard let handle else { throw PostgresError.connectionClosed(message: "the connection was closed") }
        statements.removeAll()
        sessionEnded = false
        lostInsideTransaction = false
        PQreset(handle)
        guard PQstatus(handle) == CONNECTION_OK else {
            throw PostgresError.connectFailed(message: Self.errorMessage(handle))
        }
        try setUpSession()
    }

    // MARK: Internals

    private func setUpSession() throws {
        let handle = try openHandle()
        // Constant SQL: dates come back in UTC ISO format, floats with all their digits.
        _ = try check(
            PQexec(
                handle,
                "SET TimeZone TO 'UTC'; SET DateStyle TO 'ISO, MDY'; SET extra_float_digits TO 3; SET client_encoding TO 'UTF8'"
            ))
        if let timeout = settings.statementTimeout {
            let parameters = try PostgresParameters(["\(Int((timeout * 1000).rounded()))"])
            _ = try parameters.withValues { values in
                try check(
                    PQexecParams(
                        handle, "select set_config('statement_timeout', $1, false)", 1, nil, values, nil, nil, 0))
            }
        }
    }

    /// Runs `operation`; if the session died and no transaction was open, reconnects and runs it
    /// once more, provided that cannot act twice: the statement never reached the server, or the
    /// caller said it may (`retry == .safe`). Otherwise the session is re-established for the next
    /// caller and `connectionClosed` is thrown.
    private func withReconnect<T>(_ retry: PostgresRetry, _ operation: () throws -> T) throws -> T {
        guard let handle else { throw PostgresError.connectionClosed(message: "the connection was closed") }
        if sessionEnded || PQstatus(handle) != CONNECTION_OK {
            if lostInsideTransaction {
                lostInsideTransaction = false
                throw PostgresError.connectionClosed(message: "the connection was lost inside a transaction")
            }
            try reconnect()
        } else if retry == .never && reconnectsOnFailure && !isInTransaction && !isAliveBeforeSend() {
            // The server already said goodbye (restart, terminated backend): reconnect before a
            // statement that cannot be re-run is sent rather than lose its outcome.
            postgresLogger.notice(
                "PostgreSQL session ended while idle, reconnecting before a statement that cannot be re-run")
            try reconnect()
        }
        let wasInTransaction = isInTransaction
        statementMayHaveRun = false
        do {
            return try operation()
        } catch let error as PostgresError {
            guard case .connectionClosed = error else { throw error }
            if wasInTransaction || !reconnectsOnFailure {
                lostInsideTransaction = wasInTransaction
                throw error
            }
            guard !statementMayHaveRun || retry == .safe else {
                postgresLogger.warning(
                    "PostgreSQL connection lost after a statement was sent; not re-running it",
                    metadata: ["reason": "\(error)"])
                // A fresh session for whoever uses this connection next; the write's outcome is unknown.
                try? reconnect()
                throw PostgresError.connectionClosed(
                    message:
                        "the connection was lost after the statement was sent; it may or may not have run (\(error))")
            }
            postgresLogger.notice("PostgreSQL connection lost, reconnecting", metadata: ["reason": "\(error)"])
            try reconnect()
            return try operation()
        }
    }

    /// Reads what the server sent while the session was idle, without blocking and without taking
    /// notifications off libpq's queue, and says whether the session is still usable.
    private func isAliveBeforeSend() -> Bool {
        guard let handle, PQstatus(handle) == CONNECTION_OK else { return false }
        return PQconsumeInput(handle) == 1 && PQstatus(handle) == CONNECTION_OK
    }

    private func run(_ sql: String, _ parameters: PostgresParameters) throws -> PostgresResult {
        let handle = try openHandle()
        guard settings.statementCacheCapacity > 0 else {
            return try parameters.withValues { values in
                try parameters.types.withUnsafeBufferPointer { types in
                    // libpq returns no result only when it could not send the statement (PQexec's contract).
                    let result = PQexecParams(
                        handle, sql, Int32(parameters.count), types.baseAddress, values, nil, nil, 0)
                    statementMayHaveRun = result != nil
                    return try check(result)
                }
            }
        }
        let name = try preparedStatement(sql, parameters)
        return try parameters.withValues { values in
            let result = PQexecPrepared(handle, name, Int32(parameters.count), values, nil, nil, 0)
            statementMayHaveRun = result != nil
            return try check(result)
        }
    }

    /// The name of the prepared statement for `sql` with these parameter types, preparing it if needed.
    private func preparedStatement(_ sql: String, _ parameters: PostgresParameters) throws -> String {
        if let name = statements.name(for: sql, parameters) { return name }
        if let evicted = statements.evictIfFull() { deallocate(evicted) }
        let name = statements.nextName()
        let handle = try openHandle()
        let types = parameters.types
        _ = try types.withUnsafeBufferPointer { types in
            try check(PQprepare(handle, name, sql, Int32(parameters.count), types.baseAddress))
        }
        statements.insert(name, sql: sql, types: types)
        return name
    }

    /// Drops the statement for `sql` with `parameters`' types from the cache and the server.
    private func forgetStatement(_ sql: String, _ parameters: PostgresParameters) {
        if let name = statements.remove(sql, parameters) { deallocate(name) }
    }

    private func deallocate(_ name: String) {
        guard let handle, PQstatus(handle) == CONNECTION_OK else { return }
        // Our own generated name, not a value. Fails harmlessly inside an aborted transaction.
        if let result = PQexec(handle, "DEALLOCATE \(name)") { PQclear(result) }
    }

    /// Whether the transaction in progress was aborted by an error (only `ROLLBACK` is accepted).
    var isInFailedTransaction: Bool {
        guard let handle else { return false }
        return PQtransactionStatus(handle) == PQTRANS_INERROR
    }

    /// Sends `sql` (a rollback) if the session is alive, ignoring its outcome: the caller is already
    /// throwing an error of its own.
    func rollbackQuietly(_ sql: String) {
        guard let handle, PQstatus(handle) == CONNECTION_OK, !sessionEnded else { return }
        if let result = PQexec(handle, sql) { PQclear(result) }
    }

    /// The libpq handle, or `connectionClosed` after `close()`.
    func requireHandle() throws -> OpaquePointer { try openHandle() }

    private func openHandle() throws -> OpaquePointer {
        guard let handle else { throw PostgresError.connectionClosed(message: "the connection was closed") }
        return handle
    }

    /// Turns a libpq result into a `PostgresResult` or the error it carries (clearing it then).
    private func check(_ result: OpaquePointer?) throws -> PostgresResult {
        guard let result else {
            let message = Self.errorMessage(handle)
            if PQstatus(handle) != CONNECTION_OK { throw PostgresError.connectionClosed(message: message) }
            throw PostgresError.unexpectedResult(message)
        }
        let status = PQresultStatus(result)
        switch status {
        case PGRES_TUPLES_OK, PGRES_COMMAND_OK, PGRES_EMPTY_QUERY:
            return PostgresResult(handle: result)
        case PGRES_FATAL_ERROR, PGRES_NONFATAL_ERROR, PGRES_BAD_RESPONSE:
            let error = Self.serverError(result, connection: handle)
            PQclear(result)
            if PQstatus(handle) != CONNECTION_OK {
                throw PostgresError.connectionClosed(message: error.serverMessage ?? Self.errorMessage(handle))
            }
            if let state = error.sqlState, Self.endsSession(state) {
                sessionEnded = true
                throw PostgresError.connectionClosed(message: error.serverMessage ?? "\(state)")
            }
            throw error
        default:
            let name = String(cString: PQresStatus(status))
            PQclear(result)
            // COPY and pipeline states leave the session in a mode this layer does not drive.
            sessionEnded = true
            throw PostgresError.unexpectedResult(name)
        }
    }

    private static func connect(url: String, connectTimeout: Int) -> OpaquePointer? {
        // Entries before `dbname` are defaults that the URL can override.
        let keywords = ["fallback_application_name", "connect_timeout", "dbname"]
        let values = ["galleryd", String(connectTimeout), url]
        let cKeywords = keywords.map { strdup($0) }
        let cValues = values.map { strdup($0) }
        defer {
            for pointer in cKeywords { free(pointer) }
            for pointer in cValues { free(pointer) }
        }
        var keywordPointers = cKeywords.map { UnsafePointer($0) } + [nil]
        var valuePointers = cValues.map { UnsafePointer($0) } + [nil]
        return keywordPointers.withUnsafeMutableBufferPointer { k in
            valuePointers.withUnsafeMutableBufferPointer { v in
                PQconnectdbParams(k.baseAddress, v.baseAddress, 1)
            }
        }
    }

    static func errorMessage(_ handle: OpaquePointer?) -> String {
        guard let handle, let message = PQerrorMessage(handle) else { return "out of memory" }
        let text = String(cString: message).trimmingCharacters(in: .whitespacesAndNewlines)
        return text.isEmpty ? "unknown libpq error" : text
    }

    private static func serverError(_ result: OpaquePointer, connection: OpaquePointer?) -> PostgresError {
        func field(_ code: Character) -> String? {
            guard let value = PQresultErrorField(result, Int32(code.asciiValue!)) else { return nil }
            return String(cString: value)
        }
        guard let state = field("C") else {
            // A client-side failure (lost connection): libpq's message, no SQLSTATE.
            var message = String(cString: PQresultErrorMessage(result)).trimmingCharacters(in: .whitespacesAndNewlines)
            if message.isEmpty { message = errorMessage(connection) }
            return .connectionClosed(message: message)
        }
        return .server(sqlState: SQLState(state), message: field("M") ?? "", detail: field("D"), constraint: field("n"))
    }

    /// SQLSTATEs after which the server closes the session.
    private static func endsSession(_ state: SQLState) -> Bool {
        state.errorClass == "08" || state == .adminShutdown || state == .crashShutdown || state == .cannotConnectNow
    }

    private static func isStalePlan(_ error: PostgresError) -> Bool {
        error.sqlState == .featureNotSupported
            && (error.serverMessage?.contains("cached plan must not change result type") ?? false)
    }
}

/// Where the Postgres layer logs (reconnects, server notices at debug level).
let postgresLogger = Logger(label: "galleryd.postgres")

/// Server NOTICEs and WARNINGs go to the log at debug level instead of libpq's default, stderr.
private let postgresNoticeProcessor: PQnoticeProcessor = { _, message in
    guard let message else { return }
    postgresLogger.debug("\(String(cString: message).trimmingCharacters(in: .whitespacesAndNewlines))")
}
