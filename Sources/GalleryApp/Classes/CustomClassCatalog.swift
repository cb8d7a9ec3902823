import Postgres
import Synchronization

/// The custom classes, read from `custom_classes` and kept in memory by name. A name not held is
/// read from the database (so a class another server made is found); every schema change made
/// here drops its entry once done, so the next lookup reads what was committed. A read that began
/// before a change is not kept (`generation`). Another server's change to a class this one holds
/// is seen after a change here or a restart (docs/decisions/031).
final class CustomClassCatalog: Sendable {
    private let pool: PostgresPool
    /// The classes held, and a number that moves with every change, so a lookup that read the
    /// database before a change does not keep what it read.
    private let state = Mutex<(generation: UInt64, classes: [String: CustomClass])>((0, [:]))

    /// The column list every read of `custom_classes` selects, in `decode(_:)`'s order.
    static let columns = "class_name, table_id, fields::text, next_column, clp::text, indexes::text"

    /// A catalog reading through `pool`.
    init(pool: PostgresPool) {
        self.pool = pool
    }

    /// The class called `className`, or nil when there is none.
    func lookup(_ className: String) throws -> CustomClass? {
        let (known, generation) = state.withLock { ($0.classes[className], $0.generation) }
        if let known { return known }
        guard ParseClassName.isValidClassName(className) else { return nil }
        guard
            let row = try pool.query(
                "select \(Self.columns) from custom_classes where class_name = $1", [className], retry: .safe
            ).first
        else { return nil }
        let found = try Self.decode(row)
        state.withLock { if $0.generation == generation { $0.classes[className] = found } }
        return found
    }

    /// Every custom class, by name, read from the database.
    func all() throws -> [CustomClass] {
        try pool.query("select \(Self.columns) from custom_classes order by class_name", retry: .safe).map(Self.decode)
    }

    /// Drops the entry for `className` after a change: the next lookup reads the database.
    func forget(_ className: String) {
        state.withLock {
            $0.generation &+= 1
            $0.classes[className] = nil
        }
    }

    /// Reads the class row `columns` selected.
    static func decode(_ row: PostgresRow) throws -> CustomClass {
        try CustomClass.decode(
            className: try row.decode(String.self, 0), tableId: try row.decode(Int64.self, 1),
            fieldsJSON: try row.decode(String.self, 2), nextColumn: Int(try row.decode(Int64.self, 3)),
            clpJSON: try row.decode(String.self, 4), indexesJSON: try row.decode(String.self, 5))
    }
}
