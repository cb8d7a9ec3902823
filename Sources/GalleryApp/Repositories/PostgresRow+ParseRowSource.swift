import Foundation
import Postgres

/// Lets the Parse encoder read database rows directly, by column position. A column that is
/// missing or NULL reads as nil (the encoder then leaves the field out, as Parse Server does); a
/// value that does not decode (another type, a NULL inside an array) throws the Postgres layer's
/// decode error, which the Parse routes answer with a 500 logged under the request id.
extension PostgresRow: ParseRowSource {
    public func column(named name: String) -> Int? { columnIndex(name) }
    public func string(_ column: Int) throws -> String? { try decode(String?.self, column) }
    public func int(_ column: Int) throws -> Int64? { try decode(Int64?.self, column) }
    public func double(_ column: Int) throws -> Double? { try decode(Double?.self, column) }
    public func date(_ column: Int) throws -> Date? { try decode(Date?.self, column) }
    public func stringArray(_ column: Int) throws -> [String]? { try decode([String]?.self, column) }
    public func bool(_ column: Int) throws -> Bool? { try decode(Bool?.self, column) }

    /// Lends ASCII text (and `json`/`jsonb` text, an ACL on every row) straight from the result;
    /// other text goes through a String, which repairs any invalid UTF-8 the server let through.
    public func withText<R>(_ column: Int, _ body: (UnsafeBufferPointer<UInt8>) -> R) throws -> R? {
        switch columnType(column) {
        case .text, .varchar, .bpchar, .name, .json, .jsonb:
            return withTextBytes(column) { raw -> R? in
                guard let raw else { return nil }
                let bytes = raw.bindMemory(to: UInt8.self)
                if bytes.allSatisfy({ $0 < 0x80 }) { return body(bytes) }
                var repaired = String(decoding: bytes, as: UTF8.self)
                return repaired.withUTF8(body)
            }
        default:
            guard var value = try string(column) else { return nil }
            return value.withUTF8(body)
        }
    }

    /// Exact microseconds from the text, rounded to milliseconds; `±infinity` goes through `Date`.
    public func milliseconds(_ column: Int) throws -> Int64? {
        guard let microseconds = timestampMicroseconds(column) else {
            // NULL (most takenAt values) is nil at once; only a value the fast parse refused is read again.
            return withTextBytes(column, { $0 == nil }) ? nil : try date(column).map(ParseDate.milliseconds)
        }
        return microseconds >= 0 ? (microseconds + 500) / 1000 : -((500 - microseconds) / 1000)
    }

    /// Copies an integer's digits as they are (PostgreSQL writes integers as JSON does).
    public func writeInt(_ column: Int, as key: [UInt8], into writer: inout ParseJSONWriter) throws -> Bool {
        switch columnType(column) {
        case .int2, .int4, .int8:
            return withTextBytes(column) { raw in
                guard let raw else { return false }
                let digits = raw.bindMemory(to: UInt8.self)
                guard Self.isInteger(digits) else { return false }
                writer.key(json: key)
                writer.number(ascii: digits)
                return true
            }
        default:
            guard let value = try int(column) else { return false }
            writer.key(json: key)
            writer.int(value)
            return true
        }
    }

    /// Copies the elements of a `text[]` that PostgreSQL wrote bare (`{sea,sun}`: printable ASCII,
    /// no quotes, escapes, NULLs or nesting) straight from the result; any other array (and any
    /// other type) goes through the decoder.
    public func writeStringArray(_ column: Int, as key: [UInt8], into writer: inout ParseJSONWriter) throws -> Bool {
        switch columnType(column) {
        case .textArray, .varcharArray:
            let copied: Bool? = withTextBytes(column) { raw in
                guard let raw else { return false }
                let text = raw.bindMemory(to: UInt8.self)
                guard Self.isBareArray(text) else { return nil }
                writer.key(json: key)
                writer.beginArray()
                var elementStart = 1
                for position in 1..<text.count where text[position] == UInt8(ascii: ",") || position == text.count - 1 {
                    if position > elementStart {
                        writer.string(utf8: UnsafeBufferPointer(rebasing: text[elementStart..<position]))
                    }
                    elementStart = position + 1
                }
                writer.endArray()
                return true
            }
            if let copied { return copied }
        default:
            break
        }
        return try writeDecodedStringArray(column, as: key, into: &writer)
    }

    /// `{}` or `{e,e,…}` where every element is one or more printable ASCII bytes other than
    /// `"`, `\`, `{`, `}` and `,`, and none is `NULL` (any case): elements the decoder would
    /// read as their own bytes.
    private static func isBareArray(_ text: UnsafeBufferPointer<UInt8>) -> Bool {
        guard text.count >= 2, text[0] == UInt8(ascii: "{"), text[text.count - 1] == UInt8(ascii: "}") else {
            return false
        }
        if text.count == 2 { return true }
        var elementStart = 1
        for position in 1..<text.count {
            let byte = text[position]
            if byte == UInt8(ascii: ",") || position == text.count - 1 {
                let length = position - elementStart
                guard length > 0 else { return false }
                if length == 4 && (text[elementStart] | 0x20) == UInt8(ascii: "n")
                    && (text[elementStart + 1] | 0x20) == UInt8(ascii: "u")
                    && (text[elementStart + 2] | 0x20) == UInt8(ascii: "l")
                    && (text[elementStart + 3] | 0x20) == UInt8(ascii: "l")
                {
                    return false
                }
                elementStart = position + 1
            } else if byte <= 0x20 || byte >= 0x7F || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
                || byte == UInt8(ascii: "{") || byte == UInt8(ascii: "}")
            {
                return false
            }
        }
        return true
    }

    /// `-?[0-9]+`, the form PostgreSQL writes integers in (and a valid JSON number).
    private static func isInteger(_ text: UnsafeBufferPointer<UInt8>) -> Bool {
        let digits = text.first == UInt8(ascii: "-") ? UnsafeBufferPointer(rebasing: text.dropFirst()) : text
        return !digits.isEmpty && digits.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
    }
}
