/// A five-character SQLSTATE code from a PostgreSQL error, e.g. `23505` for a unique violation.
///
/// An open set, so a struct with named constants (like `HTTPStatus`) rather than an enum: the server
/// may send codes this file does not name. See https://www.postgresql.org/docs/current/errcodes-appendix.html
public struct SQLState: Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The five-character code as the server sent it.
    public let code: String

    /// Wraps a code received from the server or written in source.
    public init(_ code: String) { self.code = code }

    /// Lets a code be written as a literal: `let state: SQLState = "23505"`.
    public init(stringLiteral value: String) { self.code = value }

    /// The two-character class (`23` for every integrity constraint violation).
    public var errorClass: Substring { code.prefix(2) }

    /// The code itself, so it reads well in logs.
    public var description: String { code }

    // MARK: Class 08 — connection exception
    /// `08000`: the connection failed in some way.
    public static let connectionException: SQLState = "08000"
    /// `08006`: the connection was lost.
    public static let connectionFailure: SQLState = "08006"
    /// `08001`: the client could not establish the connection.
    public static let sqlClientUnableToEstablishConnection: SQLState = "08001"

    // MARK: Class 0A — feature not supported
    /// `0A000`: also sent when a cached plan's result type changed after a schema change.
    public static let featureNotSupported: SQLState = "0A000"

    // MARK: Class 22 — data exception
    /// `22001`: a value is too long for its column type.
    public static let stringDataRightTruncation: SQLState = "22001"
    /// `22003`: a number is out of range for its type.
    public static let numericValueOutOfRange: SQLState = "22003"
    /// `22007`: a date or time string could not be parsed.
    public static let invalidDatetimeFormat: SQLState = "22007"
    /// `22008`: a date or time field is out of range.
    public static let datetimeFieldOverflow: SQLState = "22008"
    /// `22012`: division by zero.
    public static let divisionByZero: SQLState = "22012"
    /// `22021`: a byte sequence is not valid in the database encoding (e.g. a NUL byte).
    public static let characterNotInRepertoire: SQLState = "22021"
    /// `22023`: a function argument is not acceptable.
    public static let invalidParameterValue: SQLState = "22023"
    /// `22P02`: text could not be read as the target type (e.g. `'abc'::int`).
    public static let invalidTextRepresentation: SQLState = "22P02"

    // MARK: Class 23 — integrity constraint violation
    /// `23000`: an integrity constraint was violated.
    public static let integrityConstraintViolation: SQLState = "23000"
    /// `23001`: a `RESTRICT` foreign key prevented the change.
    public static let restrictViolation: SQLState = "23001"
    /// `23502`: NULL in a `NOT NULL` column.
    public static let notNullViolation: SQLState = "23502"
    /// `23503`: a foreign key points nowhere (or a referenced row is still referenced).
    public static let foreignKeyViolation: SQLState = "23503"
    /// `23505`: a duplicate key in a unique index.
    public static let uniqueViolation: SQLState = "23505"
    /// `23514`: a `CHECK` constraint failed.
    public static let checkViolation: SQLState = "23514"
    /// `23P01`: an exclusion constraint failed.
    public static let exclusionViolation: SQLState = "23P01"

    // MARK: Class 25 — invalid transaction state
    /// `25006`: a write in a read-only transaction.
    public static let readOnlySQLTransaction: SQLState = "25006"
    /// `25P02`: a statement after an error in the same transaction.
    public static let inFailedSQLTransaction: SQLState = "25P02"
    /// `25P03`: the session stayed idle in a transaction for too long.
    public static let idleInTransactionSessionTimeout: SQLState = "25P03"

    // MARK: Class 40 — transaction rollback
    /// `40001`: a serializable or repeatable-read transaction must be retried.
    public static let serializationFailure: SQLState = "40001"
    /// `40P01`: the server broke a deadlock by aborting this transaction; retry it.
    public static let deadlockDetected: SQLState = "40P01"

    // MARK: Class 42 — syntax error or access rule violation
    /// `42501`: the role lacks a privilege.
    public static let insufficientPrivilege: SQLState = "42501"
    /// `42601`: the SQL does not parse.
    public static let syntaxError: SQLState = "42601"
    /// `42703`: a column does not exist.
    public static let undefinedColumn: SQLState = "42703"
    /// `42883`: no function or operator matches the arguments.
    public static let undefinedFunction: SQLState = "42883"
    /// `42P01`: a table does not exist.
    public static let undefinedTable: SQLState = "42P01"
    /// `42P07`: a table already exists.
    public static let duplicateTable: SQLState = "42P07"
    /// `42710`: an object (index, constraint, …) already exists.
    public static let duplicateObject: SQLState = "42710"

    // MARK: Class 53 — insufficient resources
    /// `53300`: the server has no connection slot left.
    public static let tooManyConnections: SQLState = "53300"

    // MARK: Class 55 — object not in prerequisite state
    /// `55006`: an object is in use by another session.
    public static let objectInUse: SQLState = "55006"
    /// `55P03`: `NOWAIT` or `lock_timeout` could not get a lock.
    public static let lockNotAvailable: SQLState = "55P03"

    // MARK: Class 57 — operator intervention
    /// `57014`: the statement was canceled (`statement_timeout` or a cancel request).
    public static let queryCanceled: SQLState = "57014"
    /// `57P01`: the server is shutting down (fast shutdown, restart) or the backend was terminated.
    public static let adminShutdown: SQLState = "57P01"
    /// `57P02`: the server is restarting after a crash of another backend.
    public static let crashShutdown: SQLState = "57P02"
    /// `57P03`: the server is starting up or shutting down and takes no connections yet.
    public static let cannotConnectNow: SQLState = "57P03"
}
