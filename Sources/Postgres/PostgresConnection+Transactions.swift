/// Transactions on one session: `BEGIN`/`COMMIT`/`ROLLBACK`, savepoints for nested calls, and a
/// statement timeout for the transaction in progress.
extension PostgresConnection {
    /// Runs `body` in a transaction: `BEGIN`, then `COMMIT`, or `ROLLBACK` when `body` throws (the
    /// error is rethrown). Nested calls use savepoints. A body that swallowed a SQL error leaves the
    /// transaction aborted: it is rolled back and `inFailedSQLTransaction` is thrown rather than
    /// pretending it committed.
    @discardableResult
    public func transaction<T>(
        isolation: PostgresIsolationLevel = .readCommitted, _ body: (PostgresConnection) throws -> T
    ) throws -> T {
        if isInTransaction { return try savepoint(body) }
        try execute(isolation == .readCommitted ? "BEGIN" : "BEGIN ISOLATION LEVEL \(isolation.rawValue)", retry: .safe)
        let value: T
        do {
            value = try body(self)
            if isInFailedTransaction {
                throw PostgresError.server(
                    sqlState: .inFailedSQLTransaction,
                    message: "the transaction was aborted by an earlier error and has been rolled back",
                    detail: nil, constraint: nil)
            }
        } catch {
            rollbackQuietly("ROLLBACK")
            throw error
        }
        do {
            try execute("COMMIT")
        } catch {
            rollbackQuietly("ROLLBACK")
            throw error
        }
        return value
    }

    /// Cuts off each statement of the transaction in progress after `milliseconds`
    /// (`SET LOCAL statement_timeout`): a tighter budget for some statements than the session's,
    /// gone at the transaction's end.
    public func setTransactionStatementTimeout(milliseconds: Int) throws {
        try execute("set local statement_timeout = \(milliseconds)")
    }

    private func savepoint<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        savepointDepth += 1
        defer { savepointDepth -= 1 }
        let name = "galleryd_savepoint_\(savepointDepth)"
        try execute("SAVEPOINT \(name)")
        do {
            let value = try body(self)
            try execute("RELEASE SAVEPOINT \(name)")
            return value
        } catch {
            rollbackQuietly("ROLLBACK TO SAVEPOINT \(name)")
            throw error
        }
    }
}
