import Postgres

/// The `class_change_sequences` table (migration 0010): each class's change sequence, bumped by
/// triggers at the commit of every writing transaction, read by `ClassChangeSequences`.
struct ChangeSequenceRepository: Sendable {
    let pool: PostgresPool

    /// Every class's current sequence.
    func all() throws -> [String: Int64] {
        var read: [String: Int64] = [:]
        for row in try pool.query("select class_name, seq from class_change_sequences") {
            read[try row.decode(String.self, "class_name")] = try row.decode(Int64.self, "seq")
        }
        return read
    }
}
