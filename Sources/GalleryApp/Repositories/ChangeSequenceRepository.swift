import Postgres

/// The `class_change_sequences` table (migration 0010): each class's change sequence, bumped by
/// triggers at the commit of every writing transaction, and `change_scope_sequences` (0020): each
/// owner's and reader's, bumped with them; read by `ClassChangeSequences`.
struct ChangeSequenceRepository: Sendable {
    let pool: PostgresPool

    /// Every class's current sequence.
    func all() throws -> [String: Int64] {
        var read: [String: Int64] = [:]
        for row in try pool.query("select class_name, seq from class_change_sequences", retry: .safe) {
            read[try row.decode(String.self, "class_name")] = try row.decode(Int64.self, "seq")
        }
        return read
    }

    /// The scope sequences above `after` (values are handed out in commit order, so those at or
    /// below it were read before), and the highest value read (`after` when none).
    func scopes(after: Int64) throws -> (values: [String: Int64], highest: Int64) {
        var read: [String: Int64] = [:]
        var highest = after
        for row in try pool.query("select scope, seq from change_scope_sequences where seq > $1", [after], retry: .safe)
        {
            let seq = try row.decode(Int64.self, "seq")
            read[try row.decode(String.self, "scope")] = seq
            highest = max(highest, seq)
        }
        return (read, highest)
    }
}
