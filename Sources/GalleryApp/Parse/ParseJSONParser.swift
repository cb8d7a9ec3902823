/// A strict RFC 8259 JSON parser for `where` parameters and request bodies.
///
/// Stricter than `JSONSerialization` on purpose: rejects invalid UTF-8, lone surrogate escapes,
/// `\u0000` (PostgreSQL text cannot hold NUL), duplicate object keys, non-finite numbers, and
/// nesting deeper than the configured depth (checked before recursing, so hostile input
/// cannot exhaust the stack). Syntax errors are Parse error 107, too deep is 102.
public struct ParseJSONParser {
    private let bytes: [UInt8]
    private let maxDepth: Int
    private var index = 0

    /// Parses `bytes` as one JSON value (surrounding whitespace allowed).
    public static func parse(_ bytes: [UInt8], maxDepth: Int) throws -> ParseJSONValue {
        var parser = ParseJSONParser(bytes: bytes, maxDepth: maxDepth)
        parser.skipWhitespace()
        let value = try parser.parseValue(depth: 1)
        parser.skipWhitespace()
        guard parser.index == bytes.count else { throw parser.syntax("unexpected data after the JSON value") }
        return value
    }

    /// Parses a string's UTF-8 bytes as one JSON value.
    public static func parse(_ text: String, maxDepth: Int) throws -> ParseJSONValue {
        try parse(Array(text.utf8), maxDepth: maxDepth)
    }

    private init(bytes: [UInt8], maxDepth: Int) {
        self.bytes = bytes
        self.maxDepth = maxDepth
    }

    private func syntax(_ reason: String) -> ParseError {
        ParseError.invalidJSON("invalid JSON: \(reason) at byte \(index)")
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    private mutating func parseValue(depth: Int) throws -> ParseJSONValue {
        guard index < bytes.count else { throw syntax("unexpected end of input") }
        switch bytes[index] {
        case UInt8(ascii: "{"):
            guard depth <= maxDepth else { throw tooDeep() }
            return try parseObject(depth: depth)
        case UInt8(ascii: "["):
            guard depth <= maxDepth else { throw tooDeep() }
            return try parseArray(depth: depth)
        case UInt8(ascii: "\""):
            return .string(try parseString())
        case UInt8(ascii: "t"):
            try expectLiteral("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try expectLiteral("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try expectLiteral("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return try parseNumber()
        default:
            throw syntax("unexpected character")
        }
    }

    private func tooDeep() -> ParseError {
        ParseError.invalidQuery("JSON is nested deeper than \(maxDepth) levels")
    }

    private mutating func expectLiteral(_ literal: StaticString) throws {
        let count = literal.utf8CodeUnitCount
        guard index + count <= bytes.count else { throw syntax("unexpected end of input") }
        let start = literal.utf8Start
        for offset in 0..<count where bytes[index + offset] != start[offset] {
            throw syntax("invalid literal")
        }
        index += count
    }

    private mutating func parseObject(depth: Int) throws -> ParseJSONValue {
        index += 1
        var members: [ParseJSONObject.Member] = []
        var seen: Set<String> = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return .object(ParseJSONObject())
        }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw syntax("expected a string key") }
            let key = try parseString()
            guard seen.insert(key).inserted else { throw syntax("duplicate key") }
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw syntax("expected ':'") }
            index += 1
            skipWhitespace()
            let value = try parseValue(depth: depth + 1)
            members.append(ParseJSONObject.Member(key: key, value: value))
            skipWhitespace()
            guard index < bytes.count else { throw syntax("unexpected end of input") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
            } else if bytes[index] == UInt8(ascii: "}") {
                index += 1
                return .object(ParseJSONObject(members))
            } else {
                throw syntax("expected ',' or '}'")
            }
        }
    }

    private mutating func parseArray(depth: Int) throws -> ParseJSONValue {
        index += 1
        var elements: [ParseJSONValue] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            elements.append(try parseValue(depth: depth + 1))
            skipWhitespace()
            guard index < bytes.count else { throw syntax("unexpected end of input") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
            } else if bytes[index] == UInt8(ascii: "]") {
                index += 1
                return .array(elements)
            } else {
                throw syntax("expected ',' or ']'")
            }
        }
    }

    private mutating func parseString() throws -> String {
        index += 1  // opening quote
        let start = index
        // Fast path: no escapes.
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let slice = bytes[start..<index]
                index += 1
                guard let string = String(validating: slice, as: UTF8.self) else {
                    throw syntax("invalid UTF-8 in string")
                }
                return string
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw syntax("unescaped control character in string") }
            index += 1
        }
        var buffer = Array(bytes[start..<index])
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                guard let string = String(validating: buffer, as: UTF8.self) else {
                    throw syntax("invalid UTF-8 in string")
                }
                return string
            case UInt8(ascii: "\\"):
                index += 1
                guard index < bytes.count else { throw syntax("unexpected end of input") }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""): buffer.append(0x22)
                case UInt8(ascii: "\\"): buffer.append(0x5C)
                case UInt8(ascii: "/"): buffer.append(0x2F)
                case UInt8(ascii: "b"): buffer.append(0x08)
                case UInt8(ascii: "f"): buffer.append(0x0C)
                case UInt8(ascii: "n"): buffer.append(0x0A)
                case UInt8(ascii: "r"): buffer.append(0x0D)
                case UInt8(ascii: "t"): buffer.append(0x09)
                case UInt8(ascii: "u"):
                    let scalar = try parseUnicodeEscape()
                    buffer.append(contentsOf: String(Character(scalar)).utf8)
                default:
                    throw syntax("invalid escape")
                }
            default:
                if byte < 0x20 { throw syntax("unescaped control character in string") }
                buffer.append(byte)
                index += 1
            }
        }
        throw syntax("unterminated string")
    }

    private mutating func parseHex4() throws -> UInt32 {
        guard index + 4 <= bytes.count else { throw syntax("truncated \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw syntax("invalid \\u escape")
            }
            value = value << 4 | digit
            index += 1
        }
        return value
    }

    /// Reads the 4 hex digits after `\u` (and a following low surrogate escape when needed).
    private mutating func parseUnicodeEscape() throws -> Unicode.Scalar {
        let first = try parseHex4()
        var code = first
        if (0xD800...0xDBFF).contains(first) {
            guard index + 2 <= bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u")
            else {
                throw syntax("lone surrogate in \\u escape")
            }
            index += 2
            let second = try parseHex4()
            guard (0xDC00...0xDFFF).contains(second) else { throw syntax("lone surrogate in \\u escape") }
            code = 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
        } else if (0xDC00...0xDFFF).contains(first) {
            throw syntax("lone surrogate in \\u escape")
        }
        guard code != 0 else { throw syntax("\\u0000 is not allowed") }
        guard let scalar = Unicode.Scalar(code) else { throw syntax("invalid \\u escape") }
        return scalar
    }

    private mutating func parseNumber() throws -> ParseJSONValue {
        let start = index
        var isInteger = true
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count else { throw syntax("invalid number") }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
        } else if isDigit(bytes[index]) {
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        } else {
            throw syntax("invalid number")
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            isInteger = false
            index += 1
            guard index < bytes.count, isDigit(bytes[index]) else { throw syntax("invalid number") }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            isInteger = false
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                index += 1
            }
            guard index < bytes.count, isDigit(bytes[index]) else { throw syntax("invalid number") }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        if isInteger, let value = Int64(text) { return .int(value) }
        guard index - start <= 400, let value = Double(text), value.isFinite else {
            throw syntax("number out of range")
        }
        return .double(value)
    }

    private func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
}
