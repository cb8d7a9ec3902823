import Foundation

/// One result row as the encoder reads it. Columns are looked up by name once per response
/// (`column(named:)`, on the first row: every row of a result has the same columns) and then read
/// by that handle, so encoding a page never searches column names per field and row. The Postgres
/// layer's row conforms with positions; tests use a dictionary keyed by name. Each getter returns
/// nil for SQL NULL or a missing column, and throws for a value it cannot decode (a column of
/// another type, an array holding a NULL): a data bug must surface as an error, not as a field
/// quietly left out of an answer that still says 200.
public protocol ParseRowSource {
    /// How a resolved column is named to the getters.
    associatedtype Column
    /// The handle of the result column called `name`, or nil when the result has none.
    func column(named name: String) -> Column?
    /// A `text` column.
    func string(_ column: Column) throws -> String?
    /// An integer column (`smallint`, `int`, `bigint`).
    func int(_ column: Column) throws -> Int64?
    /// A `double precision` (or `real`) column.
    func double(_ column: Column) throws -> Double?
    /// A `timestamptz` column.
    func date(_ column: Column) throws -> Date?
    /// A `text[]` column.
    func stringArray(_ column: Column) throws -> [String]?
    /// A `boolean` column.
    func bool(_ column: Column) throws -> Bool?
    /// A timestamp column as milliseconds since 1970 (rounded half away from zero).
    func milliseconds(_ column: Column) throws -> Int64?
    /// Calls `body` with a text column's value as valid UTF-8, or returns nil when it reads as nil.
    /// Rows that hold the text as bytes can lend them without making a String.
    func withText<R>(_ column: Column, _ body: (UnsafeBufferPointer<UInt8>) -> R) throws -> R?
    /// Writes `key` (`"name":`) and the text column's value as a JSON string; false (nothing
    /// written) when it reads as nil.
    func writeString(_ column: Column, as key: [UInt8], into writer: inout ParseJSONWriter) throws -> Bool
    /// Writes `key` (`"name":`) and the integer column's value; false (nothing written) when it reads as nil.
    func writeInt(_ column: Column, as key: [UInt8], into writer: inout ParseJSONWriter) throws -> Bool
    /// Writes `key` (`"name":`) and the `text[]` column's value as an array of strings; false
    /// (nothing written) when it reads as nil.
    func writeStringArray(_ column: Column, as key: [UInt8], into writer: inout ParseJSONWriter) throws -> Bool
}

extension ParseRowSource {
    /// Reads a boolean from its text form (`t`/`f`, as libpq returns it).
    public func bool(_ column: Column) throws -> Bool? {
        switch try string(column) {
        case "t", "true": return true
        case "f", "false": return false
        default: return nil
        }
    }

    public func milliseconds(_ column: Column) throws -> Int64? { try date(column).map(ParseDate.milliseconds) }

    public func withText<R>(_ column: Column, _ body: (UnsafeBufferPointer<UInt8>) -> R) throws -> R? {
        guard var value = try string(column) else { return nil }
        return value.withUTF8(body)
    }

    public func writeString(_ column: Column, as key: [UInt8], into writer: inout ParseJSONWriter) throws -> Bool {
        let written: Void? = try withText(column) { text in
            writer.key(json: key)
            writer.string(utf8: text)
        }
        return written != nil
    }

    public func writeInt(_ column: Column, as key: [UInt8], into writer: inout ParseJSONWriter) throws -> Bool {
        guard let value = try int(column) else { return false }
        writer.key(json: key)
        writer.int(value)
        return true
    }

    public func writeStringArray(_ column: Column, as key: [UInt8], into writer: inout ParseJSONWriter) throws
        -> Bool
    {
        try writeDecodedStringArray(column, as: key, into: &writer)
    }

    /// `writeStringArray` through `stringArray`, the decoder every row source has.
    public func writeDecodedStringArray(_ column: Column, as key: [UInt8], into writer: inout ParseJSONWriter)
        throws -> Bool
    {
        guard let values = try stringArray(column) else { return false }
        writer.key(json: key)
        writer.beginArray()
        for value in values { writer.string(value) }
        writer.endArray()
        return true
    }
}
