import Foundation

/// A Swift value that can be sent as a query parameter (`$1`, `$2`, …).
///
/// Values travel separately from the SQL text, in PostgreSQL's text input format, so nothing a user
/// types can change a statement. `nil` in a bind list is SQL NULL.
public protocol PostgresBindable {
    /// The type the server reads the parameter as. `.unknown` lets it infer the type from where the
    /// parameter appears, exactly as for a quoted literal (what `String` uses).
    var postgresType: PostgresType { get }

    /// Appends the value in the text input format of `postgresType` (no terminating NUL).
    func encodePostgresText(into buffer: inout [UInt8])
}

extension String: PostgresBindable {
    /// Untyped, like a literal: `where id = $1`, `$1::jsonb` and `created_at > $1` all work.
    public var postgresType: PostgresType { .unknown }
    /// The UTF-8 bytes as they are.
    public func encodePostgresText(into buffer: inout [UInt8]) { buffer.append(contentsOf: utf8) }
}

extension Substring: PostgresBindable {
    /// Untyped, like `String`.
    public var postgresType: PostgresType { .unknown }
    /// The UTF-8 bytes as they are.
    public func encodePostgresText(into buffer: inout [UInt8]) { buffer.append(contentsOf: utf8) }
}

extension Int: PostgresBindable {
    /// `bigint`; compares with and assigns to `integer` and `smallint` columns too.
    public var postgresType: PostgresType { .int8 }
    /// Decimal digits.
    public func encodePostgresText(into buffer: inout [UInt8]) {
        PostgresTextFormat.appendInteger(Int64(self), to: &buffer)
    }
}

extension Int64: PostgresBindable {
    /// `bigint`.
    public var postgresType: PostgresType { .int8 }
    /// Decimal digits.
    public func encodePostgresText(into buffer: inout [UInt8]) { PostgresTextFormat.appendInteger(self, to: &buffer) }
}

extension Int32: PostgresBindable {
    /// `integer`.
    public var postgresType: PostgresType { .int4 }
    /// Decimal digits.
    public func encodePostgresText(into buffer: inout [UInt8]) {
        PostgresTextFormat.appendInteger(Int64(self), to: &buffer)
    }
}

extension Int16: PostgresBindable {
    /// `smallint`.
    public var postgresType: PostgresType { .int2 }
    /// Decimal digits.
    public func encodePostgresText(into buffer: inout [UInt8]) {
        PostgresTextFormat.appendInteger(Int64(self), to: &buffer)
    }
}

extension Double: PostgresBindable {
    /// `double precision`.
    public var postgresType: PostgresType { .float8 }
    /// The shortest text that reads back as the same double; `NaN`, `Infinity`, `-Infinity`.
    public func encodePostgresText(into buffer: inout [UInt8]) {
        if isNaN {
            buffer.append(contentsOf: "NaN".utf8)
        } else if isInfinite {
            buffer.append(contentsOf: (self > 0 ? "Infinity" : "-Infinity").utf8)
        } else {
            buffer.append(contentsOf: description.utf8)
        }
    }
}

extension Bool: PostgresBindable {
    /// `boolean`.
    public var postgresType: PostgresType { .bool }
    /// `t` or `f`.
    public func encodePostgresText(into buffer: inout [UInt8]) {
        buffer.append(self ? UInt8(ascii: "t") : UInt8(ascii: "f"))
    }
}

extension Date: PostgresBindable {
    /// `timestamptz`.
    public var postgresType: PostgresType { .timestamptz }
    /// UTC, rounded to the millisecond (the precision Parse dates have): `2024-03-05 12:34:56.789+00`.
    public func encodePostgresText(into buffer: inout [UInt8]) { PostgresTextFormat.appendTimestamp(self, to: &buffer) }
}

extension Array: PostgresBindable where Element: PostgresArrayElement {
    /// `text[]` or `bigint[]`, after the element type.
    public var postgresType: PostgresType { Element.postgresArrayType }
    /// An array literal with every element quoted as needed.
    public func encodePostgresText(into buffer: inout [UInt8]) { Element.encodePostgresArray(self, into: &buffer) }
}

/// An element type whose Swift arrays bind as PostgreSQL arrays (`[String]` as `text[]`,
/// `[Int64]` and `[Int]` as `bigint[]`).
public protocol PostgresArrayElement {
    /// The array type, e.g. `text[]`.
    static var postgresArrayType: PostgresType { get }
    /// Appends `elements` as an array literal.
    static func encodePostgresArray(_ elements: [Self], into buffer: inout [UInt8])
}

extension String: PostgresArrayElement {
    /// `text[]`.
    public static var postgresArrayType: PostgresType { .textArray }
    /// `{"a","b \"c\""}`: each element quoted and escaped.
    public static func encodePostgresArray(_ elements: [String], into buffer: inout [UInt8]) {
        PostgresTextFormat.appendTextArray(elements, to: &buffer)
    }
}

extension Int64: PostgresArrayElement {
    /// `bigint[]`.
    public static var postgresArrayType: PostgresType { .int8Array }
    /// `{1,2,3}`.
    public static func encodePostgresArray(_ elements: [Int64], into buffer: inout [UInt8]) {
        PostgresTextFormat.appendIntegerArray(elements, to: &buffer)
    }
}

extension Int: PostgresArrayElement {
    /// `bigint[]`.
    public static var postgresArrayType: PostgresType { .int8Array }
    /// `{1,2,3}`.
    public static func encodePostgresArray(_ elements: [Int], into buffer: inout [UInt8]) {
        PostgresTextFormat.appendIntegerArray(elements, to: &buffer)
    }
}
