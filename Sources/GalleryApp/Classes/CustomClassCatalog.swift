import Postgres
import Synchronization

/// The custom classes, read from `custom_classes` and kept in memory by name. A name not held is
/// read from the database (so a class another server made is found); every schema change made
/// here replaces its entry after commit. Another server's change to a class this one holds is
/// seen after `forget` or a restart (docs/decisions/031).
final class CustomClassCatalog: Sendable {
    private let pool: PostgresPool
    private let classes = Mutex<[String: CustomClass]>([:])

    /// The column list every read of `custom_classes` selects, in `decode(_:)`'s order.
    static let columns = "class_name, table_id, fields::text, next_column, clp::text, indexes::text"

    /// A catalog reading through `pool`.
    init(pool: PostgresPool) {
        self.pool = pool
    }

    /// The class called `className`, or nil when there is none.
    func lookup(_ className: String) throws -> CustomClass? {
        if let known = classes.withLock({ $0[className] }) { return known }
        guard ParseClassName.isValidClassName(className) else { return nil }
        guard let row = try pool.query("select \(Self.columns) from custom_classes where class_name = $1", [className], retry: .safe).first
        else { return nil }
        let found = try Self.decode(row)
        classes.withLock { $0[className] = found }
        return found
    }

    /// Every custom class, by name, read from the database.
    func all() throws -> [CustomClass] {
        let found = try pool.query("select \(Self.columns) from custom_classes order by class_name", retry: .safe).map(Self.decode)
        classes.withLock { held in
            held.removeAll()
            for custom in found { held[custom.className] = custom }
        }
        return found
    }

    /// Holds `custom` (after the transaction that stored it committed).
    func remember(_ custom: CustomClass) {
        classes.withLock { $0[custom.className] = custom }
    }

    /// Drops the entry for `className`: the next lookup reads the database.
    func forget(_ className: String) {
        _ = classes.withLock { $0.removeValue(forKey: className) }
    }

    /// Reads the class row `columns` selected.
    static func decode(_ row: PostgresRow) throws -> CustomClass {
        try CustomClass.decode(
            className: try row.decode(String.self, 0), tableId: try row.decode(Int64.self, 1),
            fieldsJSON: try row.decode(String.self, 2), nextColumn: Int(try row.decode(Int64.self, 3)),
            clpJSON: try row.decode(String.self, 4), indexesJSON: try row.decode(String.self, 5))
    }
}
