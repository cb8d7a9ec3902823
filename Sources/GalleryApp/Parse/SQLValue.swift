import Foundation

/// A value bound to a `$n` placeholder of a compiled statement. Values never appear in SQL
/// text; the Postgres layer sends them as parameters (the SQL casts each placeholder to its
/// type, so sending every value as text with an unspecified type is enough).
public enum SQLValue: Equatable, Sendable {
    /// SQL NULL.
    case null
    /// A `text` value.
    case text(String)
    /// A `bigint` value.
    case int(Int64)
    /// A `double precision` value.
    case double(Double)
    /// A `boolean` value.
    case bool(Bool)
    /// A `timestamptz` value (millisecond precision is what Parse carries).
    case timestamp(Date)
    /// A `text[]` value.
    case textArray([String])
}
