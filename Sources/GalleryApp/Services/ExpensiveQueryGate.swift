import Foundation
import Postgres

/// A few slots for expensive queries (see `ParseQuery.isExpensive`), and a shorter statement
/// timeout for them, so a handful of unanchored regexes or deep skips cannot hold every pooled
/// connection for the full statement timeout while the first page and the bucket wait.
public final class ExpensiveQueryGate: Sendable {
    /// Expensive queries allowed at once.
    public let slots: Int
    /// Longest a query waits for a slot before 503, in seconds.
    public let waitTimeout: Double
    /// The statement timeout inside a slot, in milliseconds.
    public let statementTimeoutMs: Int
    private let semaphore: DispatchSemaphore

    /// A gate of `slots` slots.
    public init(slots: Int, waitTimeout: Double, statementTimeoutMs: Int) {
        self.slots = max(1, slots)
        self.waitTimeout = waitTimeout
        self.statementTimeoutMs = statementTimeoutMs
        semaphore = DispatchSemaphore(value: max(1, slots))
    }

    /// Runs `body` in a slot, in a read-only transaction whose statements are cut off after
    /// `statementTimeoutMs` (answered as Parse's 124). Throws `PostgresError.poolTimeout` (503,
    /// retry) when no slot frees up within `waitTimeout`.
    public func run<T>(on pool: PostgresPool, _ body: (PostgresConnection) throws -> T) throws -> T {
        let started = Date()
        guard semaphore.wait(timeout: .now() + waitTimeout) == .success else {
            throw PostgresError.poolTimeout(waited: Date().timeIntervalSince(started))
        }
        defer { semaphore.signal() }
        return try pool.transaction { connection in
            try connection.setTransactionStatementTimeout(milliseconds: statementTimeoutMs)
            return try body(connection)
        }
    }
}
