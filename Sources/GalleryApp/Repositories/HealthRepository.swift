import Postgres

/// What `/ready` asks the database: whether it answers at all (the migrations are the
/// `Migrator`'s question).
struct HealthRepository: Sendable {
    let pool: PostgresPool

    /// Throws unless a pooled connection answers a trivial statement.
    func ping() throws {
        _ = try pool.query("select 1", retry: .safe)
    }
}
