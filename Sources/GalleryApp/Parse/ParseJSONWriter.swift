/// A small, fast JSON writer into a byte buffer, used on the hot path of query responses
/// instead of `JSONSerialization`. The caller drives structure (`beginObject`, `key`, values);
/// the writer inserts commas and escapes strings per RFC 8259 §7.
public struct ParseJSONWriter {
    /// The JSON written so far.
    public private(set) var bytes: [UInt8]
    /// Whether the next value or key in the current container needs a leading comma.
    private var needsComma = false

    /// A writer whose buffer starts with room for `capacity` bytes.
    public init(capacity: Int = 1024) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    private mutating func separator() {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
        needsComma = true
    }

    /// Starts an object (as a value in the current container).
    public mutating func beginObject() {
        separator()
        bytes.append(UInt8(ascii: "{"))
        needsComma = false
    }

    /// Ends the current object.
    public mutating func endObject() {
        bytes.append(UInt8(ascii: "}"))
        needsComma = true
    }

    /// Starts an array (as a value in the current container).
    public mutating func beginArray() {
        separator()
        bytes.append(UInt8(ascii: "["))
        needsComma = false
    }

    /// Ends the current array.
    public mutating func endArray() {
        bytes.append(UInt8(ascii: "]"))
        needsComma = true
    }

    /// Writes an object key; the next call writes its value.
    public mutating func key(_ key: String) {
        separator()
        appendQuoted(key)
        bytes.append(UInt8(ascii: ":"))
        needsComma = false
    }

    /// Writes an object key already in JSON form with its colon (`"name":`, see `ParseField.jsonKey`).
    public mutating func key(json: [UInt8]) {
        separator()
        bytes.append(contentsOf: json)
        needsComma = false
    }

    /// Writes a string value.
    public mutating func string(_ value: String) {
        separator()
        appendQuoted(value)
    }

    /// Writes an integer value.
    public mutating func int(_ value: Int64) {
        separator()
        if value >= 0 && value < 10 {
            bytes.append(UInt8(ascii: "0") + UInt8(value))
        } else {
            bytes.append(contentsOf: String(value).utf8)
        }
    }

    /// Writes a number value; non-finite numbers (which JSON cannot express) become `null`.
    public mutating func double(_ value: Double) {
        separator()
        if value.isFinite {
            bytes.append(contentsOf: value.description.utf8)
        } else {
            bytes.append(contentsOf: "null".utf8)
        }
    }

    /// Writes `true` or `false`.
    public mutating func bool(_ value: Bool) {
        separator()
        bytes.append(contentsOf: (value ? "true" : "false").utf8)
    }

    /// Writes `null`.
    public mutating func null() {
        separator()
        bytes.append(contentsOf: "null".utf8)
    }

    /// Writes a date as a quoted `YYYY-MM-DDTHH:MM:SS.mmmZ` string.
    public mutating func isoDate(milliseconds: Int64) {
        separator()
        bytes.append(UInt8(ascii: "\""))
        ParseDate.append(milliseconds: milliseconds, to: &bytes)
        bytes.append(UInt8(ascii: "\""))
    }

    /// Writes a date as Parse's `{"__type":"Date","iso":"…"}` object (a field's value; the built-in
    /// `createdAt`/`updatedAt` are plain `isoDate` strings).
    public mutating func parseDate(milliseconds: Int64) {
        beginObject()
        key("__type")
        string("Date")
        key("iso")
        isoDate(milliseconds: milliseconds)
        endObject()
    }

    /// Writes a parsed JSON value back out (members in their order).
    public mutating func value(_ value: ParseJSONValue) {
        switch value {
        case .null: null()
        case .bool(let b): bool(b)
        case .int(let i): int(i)
        case .double(let d): double(d)
        case .string(let s): string(s)
        case .array(let items):
            beginArray()
            for item in items { self.value(item) }
            endArray()
        case .object(let object):
            beginObject()
            for member in object.members {
                key(member.key)
                self.value(member.value)
            }
            endObject()
        }
    }

    /// Appends already-serialised JSON as one value (the caller vouches for its validity).
    public mutating func raw(_ json: [UInt8]) {
        separator()
        bytes.append(contentsOf: json)
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    /// Writes a string value from UTF-8 bytes the caller vouches are valid UTF-8 (`prefix` and
    /// `infix`, if given, go before it, inside the same quotes; `infix` as it is, so the caller
    /// vouches it needs no escaping): for values copied out of a result without making a String.
    public mutating func string(utf8 value: UnsafeBufferPointer<UInt8>, prefix: [UInt8] = [], infix: [UInt8] = []) {
        separator()
        bytes.append(UInt8(ascii: "\""))
        prefix.withUnsafeBufferPointer { appendEscaped($0) }
        bytes.append(contentsOf: infix)
        appendEscaped(value)
        bytes.append(UInt8(ascii: "\""))
    }

    /// Writes a number already in JSON's syntax (the caller has checked it), e.g. an integer's digits.
    public mutating func number(ascii digits: UnsafeBufferPointer<UInt8>) {
        separator()
        bytes.append(contentsOf: digits)
    }

    /// `value` as a JSON string literal, quotes included: the one JSON string escaper, for the
    /// places that write JSON text without a writer (the CLI's one-line reports).
    public static func quoted(_ value: String) -> String {
        var writer = ParseJSONWriter(capacity: value.utf8.count + 2)
        writer.appendQuoted(value)
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    /// Appends `"value"` with `"`, `\` and control characters escaped. Swift strings hold only
    /// Unicode scalars, so there is never a lone surrogate to write.
    private mutating func appendQuoted(_ value: String) {
        bytes.append(UInt8(ascii: "\""))
        var value = value
        value.withUTF8 { appendEscaped($0) }
        bytes.append(UInt8(ascii: "\""))
    }

    /// Appends UTF-8 bytes with `"`, `\` and control characters escaped, copying runs that need
    /// no escaping in one go.
    private mutating func appendEscaped(_ utf8: UnsafeBufferPointer<UInt8>) {
        var runStart = 0
        for position in 0..<utf8.count {
            let byte = utf8[position]
            guard byte < 0x20 || byte == 0x22 || byte == 0x5C else { continue }
            if runStart < position {
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<position]))
            }
            runStart = position + 1
            bytes.append(UInt8(ascii: "\\"))
            switch byte {
            case 0x22: bytes.append(0x22)
            case 0x5C: bytes.append(0x5C)
            case 0x0A: bytes.append(UInt8(ascii: "n"))
            case 0x0D: bytes.append(UInt8(ascii: "r"))
            case 0x09: bytes.append(UInt8(ascii: "t"))
            case 0x08: bytes.append(UInt8(ascii: "b"))
            case 0x0C: bytes.append(UInt8(ascii: "f"))
            default:
                bytes.append(contentsOf: [UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")])
                bytes.append(Self.hexDigits[Int(byte >> 4)])
                bytes.append(Self.hexDigits[Int(byte & 0x0F)])
            }
        }
        if runStart < utf8.count {
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<utf8.count]))
        }
    }
}
