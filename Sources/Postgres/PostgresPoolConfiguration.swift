/// Where a `PostgresPool` connects and its limits, each with its default and why.
public struct PostgresPoolConfiguration: Sendable {
    /// A `postgresql://` URL or `key=value` conninfo string.
    public var url: String
    /// Most connections open at once. Default 8: a few per core is what PostgreSQL serves best;
    /// more only adds contention (and every connection is a server process).
    public var size: Int
    /// Seconds a caller waits for a free connection before `PostgresError.poolTimeout` ("database
    /// busy", HTTP 503). Default 5: fail fast under overload instead of queueing requests forever.
    public var acquireTimeout: Double
    /// Server-side limit per statement in seconds (`statement_timeout`), nil for none. Default nil;
    /// the serving process should set one so a runaway query cannot hold a connection.
    public var statementTimeout: Double?
    /// Seconds to wait for a new connection to open. Default 10 (see `PostgresConnectionSettings`).
    public var connectTimeout: Int
    /// Prepared statements kept per connection. Default 256 (see `PostgresConnectionSettings`).
    public var statementCacheCapacity: Int

    /// A configuration with the defaults above.
    public init(
        url: String, size: Int = 8, acquireTimeout: Double = 5, statementTimeout: Double? = nil,
        connectTimeout: Int = 10, statementCacheCapacity: Int = 256
    ) {
        self.url = url
        self.size = size
        self.acquireTimeout = acquireTimeout
        self.statementTimeout = statementTimeout
        self.connectTimeout = connectTimeout
        self.statementCacheCapacity = statementCacheCapacity
    }

    /// The per-connection settings derived from this configuration.
    var connectionSettings: PostgresConnectionSettings {
        PostgresConnectionSettings(
            connectTimeout: connectTimeout, statementTimeout: statementTimeout,
            statementCacheCapacity: statementCacheCapacity, reconnectsOnFailure: true)
    }
}
