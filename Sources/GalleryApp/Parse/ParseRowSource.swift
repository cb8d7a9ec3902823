import Foundation

/// One result row, read by result-column name. The Postgres layer's row conforms to this (the
/// lead adapts it); tests use a dictionary. Each getter returns nil for SQL NULL or a missing
/// column.
public protocol ParseRowSource {
    /// A `text` column.
    func string(_ column: String) -> String?
    /// An integer column (`smallint`, `int`, `bigint`).
    func int(_ column: String) -> Int64?
    /// A `double precision` (or `real`) column.
    func double(_ column: String) -> Double?
    /// A `timestamptz` column.
    func date(_ column: String) -> Date?
    /// A `text[]` column.
    func stringArray(_ column: String) -> [String]?
    /// A `boolean` column.
    func bool(_ column: String) -> Bool?
}

extension ParseRowSource {
    /// Reads a boolean from its text form (`t`/`f`, as libpq returns it).
    public func bool(_ column: String) -> Bool? {
        switch string(column) {
        case "t", "true": return true
        case "f", "false": return false
        default: return nil
        }
    }
}
