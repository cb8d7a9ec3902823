/// A snapshot of a pool's occupancy, for `/metrics`.
public struct PostgresPoolStats: Sendable, Equatable {
    /// The configured maximum number of connections.
    public var size: Int
    /// Connections currently open (idle, in use, or being opened).
    public var open: Int
    /// Connections handed out to callers.
    public var inUse: Int
    /// Open connections waiting in the pool.
    public var idle: Int
    /// Callers waiting for a connection.
    public var waiting: Int
    /// Connections handed out since the pool was made: a progress counter, so a watchdog can tell
    /// a busy pool (waiters, but this moves) from a wedged one (waiters, and it stands still).
    public var handedOut: Int = 0
}
