import Foundation

/// A Swift type a column can be decoded into with `row.decode(T.self, "column")`.
///
/// Each decoder checks the column's type OID first, so reading an `integer` column as `String` or a
/// `text` column as `Int` is a `PostgresError.typeMismatch`, not a silent conversion.
public protocol PostgresDecodable {
    /// Decodes a non-NULL value.
    static func decode(from cell: PostgresCell) throws -> Self
    /// The value for SQL NULL: Optionals give nil, every other type throws `typeMismatch`.
    static func decodeNull(from cell: PostgresCell) throws -> Self
}

extension PostgresDecodable {
    /// Non-optional types refuse NULL.
    public static func decodeNull(from cell: PostgresCell) throws -> Self {
        throw cell.nullMismatch(Self.self)
    }
}

extension Optional: PostgresDecodable where Wrapped: PostgresDecodable {
    /// Decodes the wrapped type.
    public static func decode(from cell: PostgresCell) throws -> Wrapped? { try Wrapped.decode(from: cell) }
    /// NULL is nil.
    public static func decodeNull(from cell: PostgresCell) throws -> Wrapped? { nil }
}

extension String: PostgresDecodable {
    /// Accepts the text types and the types whose text form is their natural Swift form
    /// (`json`, `jsonb`, `uuid`, `name`, `tsvector`).
    public static func decode(from cell: PostgresCell) throws -> String {
        switch cell.type {
        case .text, .varchar, .bpchar, .name, .char, .unknownLiteral, .json, .jsonb, .uuid, .tsvector:
            return cell.string
        default:
            throw cell.mismatch(String.self)
        }
    }
}

extension Int64: PostgresDecodable {
    /// Accepts `smallint`, `integer`, `bigint` and `oid`.
    public static func decode(from cell: PostgresCell) throws -> Int64 {
        switch cell.type {
        case .int2, .int4, .int8, .oidType:
            guard let value = PostgresTextFormat.parseInteger(cell.bytes) else { throw cell.mismatch(Int64.self) }
            return value
        default:
            throw cell.mismatch(Int64.self)
        }
    }
}

extension Int: PostgresDecodable {
    /// Accepts `smallint`, `integer`, `bigint` and `oid`.
    public static func decode(from cell: PostgresCell) throws -> Int {
        switch cell.type {
        case .int2, .int4, .int8, .oidType:
            guard let value = PostgresTextFormat.parseInteger(cell.bytes), let int = Int(exactly: value) else {
                throw cell.mismatch(Int.self)
            }
            return int
        default:
            throw cell.mismatch(Int.self)
        }
    }
}

extension Int32: PostgresDecodable {
    /// Accepts `smallint` and `integer` (a `bigint` could overflow: cast it in SQL if you mean it).
    public static func decode(from cell: PostgresCell) throws -> Int32 {
        switch cell.type {
        case .int2, .int4:
            guard let value = PostgresTextFormat.parseInteger(cell.bytes), let int = Int32(exactly: value) else {
                throw cell.mismatch(Int32.self)
            }
            return int
        default:
            throw cell.mismatch(Int32.self)
        }
    }
}

extension Int16: PostgresDecodable {
    /// Accepts `smallint` only.
    public static func decode(from cell: PostgresCell) throws -> Int16 {
        guard cell.type == .int2, let value = PostgresTextFormat.parseInteger(cell.bytes),
            let int = Int16(exactly: value)
        else { throw cell.mismatch(Int16.self) }
        return int
    }
}

extension Double: PostgresDecodable {
    /// Accepts `double precision`, `real` and `numeric` (rounded to the nearest double).
    public static func decode(from cell: PostgresCell) throws -> Double {
        switch cell.type {
        case .float8, .float4, .numeric:
            // libpq NUL-terminates every value, so strtod can read the bytes in place.
            guard let start = cell.bytes.baseAddress?.assumingMemoryBound(to: CChar.self) else {
                throw cell.mismatch(Double.self)
            }
            var end: UnsafeMutablePointer<CChar>?
            let value = strtod(start, &end)
            guard let end, end == UnsafeMutablePointer(mutating: start) + cell.bytes.count, cell.bytes.count > 0 else {
                throw cell.mismatch(Double.self)
            }
            return value
        default:
            throw cell.mismatch(Double.self)
        }
    }
}

extension Bool: PostgresDecodable {
    /// Accepts `boolean`.
    public static func decode(from cell: PostgresCell) throws -> Bool {
        guard cell.type == .bool, cell.bytes.count == 1 else { throw cell.mismatch(Bool.self) }
        switch cell.bytes[0] {
        case UInt8(ascii: "t"): return true
        case UInt8(ascii: "f"): return false
        default: throw cell.mismatch(Bool.self)
        }
    }
}

extension Date: PostgresDecodable {
    /// Accepts `timestamptz`, `timestamp` (read as UTC) and `date` (midnight UTC), to the microsecond.
    public static func decode(from cell: PostgresCell) throws -> Date {
        switch cell.type {
        case .timestamptz, .timestamp, .date:
            guard let date = PostgresTextFormat.parseTimestamp(cell.bytes) else { throw cell.mismatch(Date.self) }
            return date
        default:
            throw cell.mismatch(Date.self)
        }
    }
}

extension Array: PostgresDecodable where Element: PostgresArrayDecodable {
    /// Accepts one-dimensional arrays of `Element`'s column types; a NULL element is a mismatch.
    public static func decode(from cell: PostgresCell) throws -> [Element] {
        guard Element.postgresArrayTypes.contains(cell.type), let elements = PostgresTextFormat.parseArray(cell.bytes)
        else {
            throw cell.mismatch([Element].self)
        }
        var result: [Element] = []
        result.reserveCapacity(elements.count)
        for element in elements {
            guard let element, let value = Element(postgresArrayElement: element) else {
                throw cell.mismatch([Element].self)
            }
            result.append(value)
        }
        return result
    }
}

/// An element type whose arrays can be decoded (`[String]`, `[Int64]`, `[Int]`).
public protocol PostgresArrayDecodable {
    /// The array column types accepted, e.g. `text[]` and `varchar[]`.
    static var postgresArrayTypes: [PostgresType] { get }
    /// Reads one element from its unquoted text.
    init?(postgresArrayElement text: String)
}

extension String: PostgresArrayDecodable {
    /// `text[]`, `varchar[]`, `char(n)[]`, `name[]`.
    public static var postgresArrayTypes: [PostgresType] { [.textArray, .varcharArray, .bpcharArray, .nameArray] }
    /// The element as it is.
    public init?(postgresArrayElement text: String) { self = text }
}

extension Int64: PostgresArrayDecodable {
    /// `bigint[]`, `integer[]`, `smallint[]`.
    public static var postgresArrayTypes: [PostgresType] { [.int8Array, .int4Array, .int2Array] }
    /// A decimal integer.
    public init?(postgresArrayElement text: String) { self.init(text) }
}

extension Int: PostgresArrayDecodable {
    /// `bigint[]`, `integer[]`, `smallint[]`.
    public static var postgresArrayTypes: [PostgresType] { [.int8Array, .int4Array, .int2Array] }
    /// A decimal integer.
    public init?(postgresArrayElement text: String) { self.init(text) }
}
