/// Everything that goes wrong in the Postgres layer, one case per thing that happened.
///
/// The HTTP layer maps `.poolTimeout` to 503 ("database busy") and server errors by their
/// `SQLState` (a unique violation is a conflict, a serialization failure a retry, …).
public enum PostgresError: Error, CustomStringConvertible, Sendable {
    /// libpq could not open a connection; the message is libpq's.
    case connectFailed(message: String)
    /// The server rejected a statement.
    case server(sqlState: SQLState, message: String, detail: String?, constraint: String?)
    /// No connection became free within the pool's acquire timeout.
    case poolTimeout(waited: Double)
    /// A column could not be decoded as the requested Swift type (or was NULL for a non-optional).
    case typeMismatch(column: String, expected: String, actual: String)
    /// The connection is gone (server restart, network, or the pool was shut down); libpq's message.
    case connectionClosed(message: String)
    /// A row was asked for a column the result does not have.
    case columnNotFound(String)
    /// A bound value cannot be sent (text containing a NUL byte, which PostgreSQL cannot store).
    case invalidParameter(index: Int, reason: String)
    /// libpq returned a result of a kind this layer does not handle (e.g. `COPY` mode).
    case unexpectedResult(String)
    /// A migration file has a name not of the form `NNNN_name.sql`, a duplicate version, or is not UTF-8.
    case invalidMigration(file: String, reason: String)
    /// An already applied migration file was edited: its checksum differs from the recorded one.
    case migrationChanged(file: String, recorded: String, current: String)
    /// A migration file failed to apply; its transaction was rolled back.
    indirect case migrationFailed(file: String, underlying: PostgresError)

    /// The SQLSTATE of a server error (also inside a failed migration), nil for client-side errors.
    public var sqlState: SQLState? {
        switch self {
        case .server(let state, _, _, _): return state
        case .migrationFailed(_, let underlying): return underlying.sqlState
        default: return nil
        }
    }

    /// The server's primary message for server errors, nil otherwise.
    public var serverMessage: String? {
        if case .server(_, let message, _, _) = self { return message }
        return nil
    }

    /// One line for logs; never contains bound values.
    public var description: String {
        switch self {
        case .connectFailed(let message): return "could not connect to PostgreSQL: \(message)"
        case .server(let state, let message, let detail, let constraint):
            var text = "PostgreSQL error \(state): \(message)"
            if let constraint { text += " (constraint \(constraint))" }
            if let detail { text += " — \(detail)" }
            return text
        case .poolTimeout(let waited):
            return "database busy: no connection free after \(Int((waited * 1000).rounded())) ms"
        case .typeMismatch(let column, let expected, let actual):
            return "column \"\(column)\" is \(actual), cannot decode it as \(expected)"
        case .connectionClosed(let message): return "PostgreSQL connection closed: \(message)"
        case .columnNotFound(let column): return "result has no column \"\(column)\""
        case .invalidParameter(let index, let reason): return "parameter $\(index + 1): \(reason)"
        case .unexpectedResult(let status): return "unexpected PostgreSQL result: \(status)"
        case .invalidMigration(let file, let reason): return "migration \(file): \(reason)"
        case .migrationChanged(let file, let recorded, let current):
            return
                "migration \(file) was edited after it was applied (checksum \(recorded.prefix(12))… now \(current.prefix(12))…)"
        case .migrationFailed(let file, let underlying): return "migration \(file) failed: \(underlying)"
        }
    }
}
