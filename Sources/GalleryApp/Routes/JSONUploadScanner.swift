/// Reads the JavaScript SDK's JSON upload body (`{"base64": "…", "fileData": {…}, "_ApplicationId": …}`,
/// RFC 8259) in one pass, fed in chunks of any size, holding no more than a chunk and a few small strings:
/// the top-level members galleryd reads (`recordedMembers`) are kept, each up to `maxCapturedBytes`;
/// the `base64` member's characters go to a sink as they are read (escapes decoded), never kept; every
/// other member, of any type, is checked and skipped. As strict as `ParseJSONParser` (invalid UTF-8,
/// control characters, lone surrogates, `\u0000`, bad numbers, nesting deeper than `maxDepth`, trailing
/// data: `Malformed`), except that it looks for duplicate keys only among the members it reads
/// (`JSON.parse` keeps the last of two; a second `base64` or key member is refused here so that no
/// body can be read two ways), and that only the top level's own key members are read.
struct JSONUploadScanner {
    /// Why the body is not the JSON object of an upload; `description` ends with the byte offset.
    struct Malformed: Error, CustomStringConvertible {
        let description: String
    }

    /// A recorded member's value.
    enum Captured: Equatable {
        case string(String)
        /// Longer than `maxCapturedBytes`: its first bytes.
        case overlong(prefix: String)
        case notString
    }

    /// What the body's `base64` member was.
    enum Base64Member: Equatable { case absent, string, notString }

    /// Longest kept member value (and key), in bytes; the SDK's keys and tokens are tens of bytes.
    static let maxCapturedBytes = 4096
    /// The top-level string members kept for the handler (the keys and the session, Parse Server's
    /// `handleParseHeaders`); the rest (`fileData`, `_ContentType`, `_ClientVersion`, …) are skipped.
    static let recordedMembers: Set<String> = ["_ApplicationId", "_JavaScriptKey", "_MasterKey", "_SessionToken"]

    /// The recorded members found, by name.
    private(set) var members: [String: Captured] = [:]
    /// Whether there was a `base64` member, and of which type.
    private(set) var base64: Base64Member = .absent
    /// Bytes read so far.
    private(set) var offset = 0

    private enum Expect { case start, keyOrClose, key, colon, value, valueOrClose, commaOrClose, end }
    private enum Token { case none, string, literal, number }
    private enum Role {
        case topKey, nestedKey
        case captured(String)
        case base64, skipped
    }
    private enum Member {
        case recorded(String)
        case base64, other
    }
    private enum Escape {
        case none, backslash
        case hex(count: Int, value: UInt32, high: UInt32?)
        case lowBackslash(UInt32)
        case lowU(UInt32)
    }

    private static let trueBytes = Array("true".utf8)
    private static let falseBytes = Array("false".utf8)
    private static let nullBytes = Array("null".utf8)

    private let maxDepth: Int
    private var expect = Expect.start
    private var token = Token.none
    private var containers: [Bool] = []  // true: object; the count is the depth
    private var member = Member.other
    private var seen: Set<String> = []
    // A string being read.
    private var role = Role.skipped
    private var escape = Escape.none
    private var utf8Remaining = 0
    private var utf8Low: UInt8 = 0x80
    private var utf8High: UInt8 = 0xBF
    private var text: [UInt8] = []
    private var overlong = false
    // A literal or a number being read.
    private var literal: [UInt8] = []
    private var literalIndex = 0
    private var number = NumberReader()

    /// A scanner allowing containers nested `maxDepth` deep (the top object is depth 1).
    init(maxDepth: Int) {
        self.maxDepth = maxDepth
    }

    /// Reads the next bytes of the body; `base64` receives the `base64` member's characters, in order.
    mutating func feed(_ bytes: UnsafeBufferPointer<UInt8>, base64 sink: (UnsafeBufferPointer<UInt8>) -> Void)
        throws
    {
        var i = 0
        let n = bytes.count
        defer { offset += i }
        while i < n {
            let byte = bytes[i]
            switch token {
            case .string:
                // The common run: printable ASCII with no quote or backslash, handed on whole.
                if case .none = escape, utf8Remaining == 0 {
                    let end = Self.plainRunEnd(bytes, from: i)
                    if end > i {
                        emit(UnsafeBufferPointer(rebasing: bytes[i..<end]), sink)
                        i = end
                        continue
                    }
                }
                try stringByte(byte, at: i, sink)
                i += 1
            case .literal:
                guard byte == literal[literalIndex] else { throw malformed("invalid literal", i) }
                literalIndex += 1
                if literalIndex == literal.count { endValue() }
                i += 1
            case .number:
                if try numberByte(byte, at: i) { i += 1 }  // else the byte ended the number: read it again
            case .none:
                try grammarByte(byte, at: i)
                i += 1
            }
        }
    }

    /// The end of the body: the top object must be complete.
    func finish() throws {
        switch token {
        case .string: throw Malformed(description: "invalid JSON: unterminated string at byte \(offset)")
        case .none where expect == .end: return
        default: throw Malformed(description: "invalid JSON: unexpected end of input at byte \(offset)")
        }
    }

    private func malformed(_ reason: String, _ i: Int) -> Malformed {
        Malformed(description: "invalid JSON: \(reason) at byte \(offset + i)")
    }

    private mutating func grammarByte(_ byte: UInt8, at i: Int) throws {
        switch byte {
        case 0x20, 0x09, 0x0A, 0x0D: return
        default: break
        }
        switch expect {
        case .start:
            guard byte == UInt8(ascii: "{") else { throw malformed("the body is not a JSON object", i) }
            try open(object: true, at: i)
        case .keyOrClose, .key:
            if byte == UInt8(ascii: "}"), expect == .keyOrClose { return close() }
            guard byte == UInt8(ascii: "\"") else { throw malformed("expected a string key", i) }
            startString(containers.count == 1 ? .topKey : .nestedKey)
        case .colon:
            guard byte == UInt8(ascii: ":") else { throw malformed("expected ':'", i) }
            expect = .value
        case .value, .valueOrClose:
            if byte == UInt8(ascii: "]"), expect == .valueOrClose { return close() }
            try startValue(byte, at: i)
        case .commaOrClose:
            let inObject = containers.last == true
            if byte == UInt8(ascii: ",") {
                expect = inObject ? .key : .value
            } else if byte == UInt8(ascii: inObject ? "}" : "]") {
                close()
            } else {
                throw malformed(inObject ? "expected ',' or '}'" : "expected ',' or ']'", i)
            }
        case .end:
            throw malformed("unexpected data after the JSON value", i)
        }
    }

    private mutating func open(object: Bool, at i: Int) throws {
        guard containers.count < maxDepth else { throw malformed("JSON nested deeper than \(maxDepth) levels", i) }
        containers.append(object)
        expect = object ? .keyOrClose : .valueOrClose
    }

    private mutating func close() {
        containers.removeLast()
        endValue()
    }

    /// A value is complete: the top object's end, or the next member or element.
    private mutating func endValue() {
        token = .none
        expect = containers.isEmpty ? .end : .commaOrClose
    }

    private mutating func startValue(_ byte: UInt8, at i: Int) throws {
        let top = containers.count == 1
        if top, byte != UInt8(ascii: "\"") {
            switch member {
            case .base64: base64 = .notString
            case .recorded(let name): members[name] = .notString
            case .other: break
            }
        }
        switch byte {
        case UInt8(ascii: "{"): try open(object: true, at: i)
        case UInt8(ascii: "["): try open(object: false, at: i)
        case UInt8(ascii: "\""):
            guard top else { return startString(.skipped) }
            switch member {
            case .base64:
                base64 = .string
                startString(.base64)
            case .recorded(let name): startString(.captured(name))
            case .other: startString(.skipped)
            }
        case UInt8(ascii: "t"), UInt8(ascii: "f"), UInt8(ascii: "n"):
            literal =
                byte == UInt8(ascii: "t")
                ? Self.trueBytes : byte == UInt8(ascii: "f") ? Self.falseBytes : Self.nullBytes
            literalIndex = 1
            token = .literal
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            token = .number
            number = NumberReader()
            _ = try numberByte(byte, at: i)
        default:
            throw malformed("unexpected character", i)
        }
    }

    private mutating func startString(_ role: Role) {
        self.role = role
        token = .string
        escape = .none
        utf8Remaining = 0
        overlong = false
        text.removeAll(keepingCapacity: true)
    }

    /// Hands a string's decoded bytes to where its role sends them.
    private mutating func emit(_ bytes: UnsafeBufferPointer<UInt8>, _ sink: (UnsafeBufferPointer<UInt8>) -> Void) {
        switch role {
        case .base64: sink(bytes)
        case .skipped, .nestedKey: return
        case .topKey, .captured:
            let room = Self.maxCapturedBytes - text.count
            if bytes.count > room { overlong = true }
            if room > 0 { text.append(contentsOf: bytes.prefix(room)) }
        }
    }

    /// Hands on a `\u` escape's scalar as UTF-8 (`code` is never a surrogate here).
    private mutating func emitScalar(_ code: UInt32, _ sink: (UnsafeBufferPointer<UInt8>) -> Void) {
        var bytes: (UInt8, UInt8, UInt8, UInt8) = (0, 0, 0, 0)
        let count: Int
        switch code {
        case 0..<0x80: (bytes.0, count) = (UInt8(code), 1)
        case 0x80..<0x800: (bytes.0, bytes.1, count) = (UInt8(0xC0 | code >> 6), UInt8(0x80 | code & 0x3F), 2)
        case 0x800..<0x10000:
            (bytes.0, bytes.1, bytes.2) = (
                UInt8(0xE0 | code >> 12), UInt8(0x80 | code >> 6 & 0x3F), UInt8(0x80 | code & 0x3F)
            )
            count = 3
        default:
            (bytes.0, bytes.1) = (UInt8(0xF0 | code >> 18), UInt8(0x80 | code >> 12 & 0x3F))
            (bytes.2, bytes.3, count) = (UInt8(0x80 | code >> 6 & 0x3F), UInt8(0x80 | code & 0x3F), 4)
        }
        withUnsafeBytes(of: &bytes) {
            emit(UnsafeBufferPointer(rebasing: $0.bindMemory(to: UInt8.self)[0..<count]), sink)
        }
    }

    private mutating func stringByte(_ byte: UInt8, at i: Int, _ sink: (UnsafeBufferPointer<UInt8>) -> Void) throws {
        switch escape {
        case .none: break
        case .backslash:
            let decoded: UInt8
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): decoded = byte
            case UInt8(ascii: "b"): decoded = 0x08
            case UInt8(ascii: "f"): decoded = 0x0C
            case UInt8(ascii: "n"): decoded = 0x0A
            case UInt8(ascii: "r"): decoded = 0x0D
            case UInt8(ascii: "t"): decoded = 0x09
            case UInt8(ascii: "u"):
                escape = .hex(count: 0, value: 0, high: nil)
                return
            default: throw malformed("invalid escape", i)
            }
            escape = .none
            var one = decoded
            withUnsafeMutablePointer(to: &one) { emit(UnsafeBufferPointer(start: $0, count: 1), sink) }
            return
        case .hex(let count, let value, let high):
            guard let digit = Self.hexDigit(byte) else { throw malformed("invalid \\u escape", i) }
            let code = value << 4 | digit
            guard count == 3 else {
                escape = .hex(count: count + 1, value: code, high: high)
                return
            }
            escape = .none
            if let high {
                guard (0xDC00...0xDFFF).contains(code) else { throw malformed("lone surrogate in \\u escape", i) }
                return emitScalar(0x10000 + ((high - 0xD800) << 10) + (code - 0xDC00), sink)
            }
            if (0xD800...0xDBFF).contains(code) {
                escape = .lowBackslash(code)
                return
            }
            guard !(0xDC00...0xDFFF).contains(code) else { throw malformed("lone surrogate in \\u escape", i) }
            guard code != 0 else { throw malformed("\\u0000 is not allowed", i) }
            return emitScalar(code, sink)
        case .lowBackslash(let high):
            guard byte == UInt8(ascii: "\\") else { throw malformed("lone surrogate in \\u escape", i) }
            escape = .lowU(high)
            return
        case .lowU(let high):
            guard byte == UInt8(ascii: "u") else { throw malformed("lone surrogate in \\u escape", i) }
            escape = .hex(count: 0, value: 0, high: high)
            return
        }
        if utf8Remaining > 0 {
            guard byte >= utf8Low, byte <= utf8High else { throw malformed("invalid UTF-8 in string", i) }
            utf8Remaining -= 1
            (utf8Low, utf8High) = (0x80, 0xBF)
        } else {
            switch byte {
            case UInt8(ascii: "\""): return try endString(at: i)
            case UInt8(ascii: "\\"):
                escape = .backslash
                return
            case 0..<0x20: throw malformed("unescaped control character in string", i)
            case 0x20..<0x80: break
            case 0xC2...0xDF: utf8Remaining = 1
            case 0xE0: (utf8Remaining, utf8Low) = (2, 0xA0)
            case 0xED: (utf8Remaining, utf8High) = (2, 0x9F)
            case 0xE1...0xEF: utf8Remaining = 2
            case 0xF0: (utf8Remaining, utf8Low) = (3, 0x90)
            case 0xF4: (utf8Remaining, utf8High) = (3, 0x8F)
            case 0xF1...0xF3: utf8Remaining = 3
            default: throw malformed("invalid UTF-8 in string", i)
            }
        }
        var one = byte
        withUnsafeMutablePointer(to: &one) { emit(UnsafeBufferPointer(start: $0, count: 1), sink) }
    }

    private mutating func endString(at i: Int) throws {
        token = .none
        switch role {
        case .topKey:
            let name = String(decoding: text, as: UTF8.self)
            if overlong {
                member = .other
            } else if name == "base64" {
                member = .base64
            } else if Self.recordedMembers.contains(name) {
                member = .recorded(name)
            } else {
                member = .other
            }
            expect = .colon
            if case .other = member { return }
            // A second base64 or key member: refused, so that no body reads two ways.
            guard seen.insert(name).inserted else { throw malformed("duplicate key \(name)", i) }
        case .nestedKey:
            expect = .colon
        case .captured(let name):
            let value = String(decoding: text, as: UTF8.self)
            members[name] = overlong ? .overlong(prefix: value) : .string(value)
            endValue()
        case .base64, .skipped:
            endValue()
        }
    }

    /// Reads one byte of a number; false when the byte is not part of it (the number ended).
    private mutating func numberByte(_ byte: UInt8, at i: Int) throws -> Bool {
        do {
            guard try number.read(byte) else {
                endValue()
                return false
            }
            return true
        } catch let reason as NumberReader.Invalid {
            throw malformed(reason.description, i)
        }
    }

    private static func hexDigit(_ byte: UInt8) -> UInt32? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return UInt32(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return UInt32(byte - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return UInt32(byte - UInt8(ascii: "A") + 10)
        default: return nil
        }
    }
}
