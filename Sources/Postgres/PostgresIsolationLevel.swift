/// A transaction isolation level (`BEGIN ISOLATION LEVEL …`).
public enum PostgresIsolationLevel: String, Sendable {
    /// PostgreSQL's default: each statement sees what was committed before it started.
    case readCommitted = "READ COMMITTED"
    /// One snapshot for the whole transaction; conflicting writes fail with `serializationFailure`.
    case repeatableRead = "REPEATABLE READ"
    /// As if transactions ran one after another; conflicts fail with `serializationFailure`.
    case serializable = "SERIALIZABLE"
}
