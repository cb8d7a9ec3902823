/// Per-session limits and behaviour of a `PostgresConnection`, each with its default and why.
public struct PostgresConnectionSettings: Sendable {
    /// Seconds to wait for a connection to open (libpq `connect_timeout`, unless the URL sets one).
    /// Default 10: long enough for a loaded server, short enough that a dead host is reported.
    public var connectTimeout: Int
    /// Server-side limit for each statement, in seconds (`statement_timeout`); nil keeps the server's.
    /// Default nil: migrations and batch jobs may legitimately run long; the serving pool sets one.
    public var statementTimeout: Double?
    /// How many prepared statements a session keeps (least recently used are deallocated).
    /// Default 256: the app has a few dozen statement shapes; the cap bounds server memory if SQL
    /// text is ever built dynamically. 0 disables preparing (every query uses `PQexecParams`).
    public var statementCacheCapacity: Int
    /// Whether a statement that failed because the session died is re-run once on a fresh session
    /// when no transaction was open. Default true: a server restart should not fail requests.
    public var reconnectsOnFailure: Bool

    /// Settings with the defaults above, overridable one by one.
    public init(
        connectTimeout: Int = 10, statementTimeout: Double? = nil, statementCacheCapacity: Int = 256,
        reconnectsOnFailure: Bool = true
    ) {
        self.connectTimeout = connectTimeout
        self.statementTimeout = statementTimeout
        self.statementCacheCapacity = statementCacheCapacity
        self.reconnectsOnFailure = reconnectsOnFailure
    }
}
