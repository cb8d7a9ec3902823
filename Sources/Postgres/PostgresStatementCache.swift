/// The prepared statements of one session, by SQL text and parameter types, at most `capacity`
/// of them: the least recently used goes first. It keeps only their names; the connection prepares
/// and deallocates them on the server.
struct PostgresStatementCache {
    /// How many statements the session keeps (`PostgresConnectionSettings.statementCacheCapacity`).
    let capacity: Int
    private var statements: [String: [PreparedStatement]] = [:]
    /// Number of statements in the cache.
    private(set) var count = 0
    private var nameCounter = 0
    private var useCounter: UInt64 = 0

    /// An empty cache for at most `capacity` statements.
    init(capacity: Int) {
        self.capacity = capacity
    }

    /// The name of the statement prepared for `sql` with `parameters`' types, now its most recently
    /// used; nil when there is none yet.
    mutating func name(for sql: String, _ parameters: PostgresParameters) -> String? {
        useCounter &+= 1
        guard let variants = statements[sql] else { return nil }
        for statement in variants where parameters.hasTypes(statement.types) {
            statement.lastUse = useCounter
            return statement.name
        }
        return nil
    }

    /// A new name for a statement about to be prepared (each name is used once per cache).
    mutating func nextName() -> String {
        nameCounter += 1
        return "galleryd_\(nameCounter)"
    }

    /// When the cache is full, removes the least recently used statement and returns its name, to
    /// deallocate before another is prepared.
    mutating func evictIfFull() -> String? {
        guard count >= capacity else { return nil }
        var oldest: (sql: String, statement: PreparedStatement)?
        for (sql, variants) in statements {
            for statement in variants where oldest == nil || statement.lastUse < oldest!.statement.lastUse {
                oldest = (sql, statement)
            }
        }
        guard let oldest else { return nil }
        remove(oldest.sql, oldest.statement)
        return oldest.statement.name
    }

    /// Records the statement `name` just prepared for `sql` with these parameter types.
    mutating func insert(_ name: String, sql: String, types: [UInt32]) {
        statements[sql, default: []].append(PreparedStatement(name: name, types: types, lastUse: useCounter))
        count += 1
    }

    /// Removes the statement for `sql` with `parameters`' types and returns its name, to deallocate.
    mutating func remove(_ sql: String, _ parameters: PostgresParameters) -> String? {
        guard let statement = statements[sql]?.first(where: { parameters.hasTypes($0.types) }) else { return nil }
        remove(sql, statement)
        return statement.name
    }

    /// Forgets every statement (the session that held them is gone).
    mutating func removeAll() {
        statements.removeAll()
        count = 0
    }

    private mutating func remove(_ sql: String, _ statement: PreparedStatement) {
        statements[sql]?.removeAll { $0 === statement }
        if statements[sql]?.isEmpty == true { statements[sql] = nil }
        count -= 1
    }
}

/// A statement prepared on the session. The same SQL with differently typed parameters is a
/// different statement, so the cache keeps a short list of these per SQL text. A class, so that
/// marking one used does not copy the list.
private final class PreparedStatement {
    let name: String
    let types: [UInt32]
    var lastUse: UInt64

    init(name: String, types: [UInt32], lastUse: UInt64) {
        self.name = name
        self.types = types
        self.lastUse = lastUse
    }
}
