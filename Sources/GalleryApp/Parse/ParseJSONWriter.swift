/// A small, fast JSON writer into a byte buffer, used on the hot path of query responses
/// instead of `JSONSerialization`. The caller drives structure (`beginObject`, `key`, values);
/// the writer inserts commas and escapes strings per RFC 8259 §7. Every call reserves its room
/// once and copies into it through a pointer (`Storage`): a page of 20 photos makes about 2,000
/// of these calls, and each used to cost ~200 instructions in `Array.append(contentsOf:)`.
public struct ParseJSONWriter {
    /// The JSON written so far (a copy of the buffer: read it once, when the writing is done).
    public var bytes: [UInt8] { Array(UnsafeBufferPointer(start: storage.base, count: count)) }
    /// The memory written into; `count` bytes of it are used.
    private var storage: Storage
    /// How many bytes are written.
    private var count = 0
    /// Whether the next value or key in the current container needs a leading comma.
    private var needsComma = false

    /// A writer whose buffer starts with room for `capacity` bytes.
    public init(capacity: Int = 1024) {
        storage = Storage(capacity: capacity)
    }

    private mutating func separator() {
        if needsComma { append(UInt8(ascii: ",")) }
        needsComma = true
    }

    /// Starts an object (as a value in the current container).
    public mutating func beginObject() {
        separator()
        append(UInt8(ascii: "{"))
        needsComma = false
    }

    /// Ends the current object.
    public mutating func endObject() {
        append(UInt8(ascii: "}"))
        needsComma = true
    }

    /// Starts an array (as a value in the current container).
    public mutating func beginArray() {
        separator()
        append(UInt8(ascii: "["))
        needsComma = false
    }

    /// Ends the current array.
    public mutating func endArray() {
        append(UInt8(ascii: "]"))
        needsComma = true
    }

    /// Writes an object key; the next call writes its value.
    public mutating func key(_ key: String) {
        separator()
        appendQuoted(key)
        append(UInt8(ascii: ":"))
        needsComma = false
    }

    /// Writes an object key given as a literal that needs no escaping (`"__type"`, `"url"`).
    public mutating func key(ascii key: StaticString) {
        separator()
        key.withUTF8Buffer { appendQuoted(verbatim: $0) }
        append(UInt8(ascii: ":"))
        needsComma = false
    }

    /// Starts an object whose first member is `"__type":"<type>"` (a Parse File, Pointer, Relation…).
    public mutating func beginObject(type: StaticString) {
        beginObject()
        key(ascii: "__type")
        string(ascii: type)
    }

    /// Writes an object key already in JSON form with its colon (`"name":`, see `ParseField.jsonKey`).
    public mutating func key(json: [UInt8]) {
        separator()
        json.withUnsafeBufferPointer { append($0) }
        needsComma = false
    }

    /// Writes a string value.
    public mutating func string(_ value: String) {
        separator()
        appendQuoted(value)
    }

    /// Writes a string value given as a literal that needs no escaping (`"File"`).
    public mutating func string(ascii value: StaticString) {
        separator()
        value.withUTF8Buffer { appendQuoted(verbatim: $0) }
    }

    /// Writes an integer value.
    public mutating func int(_ value: Int64) {
        separator()
        appendDigits(value)
    }

    /// Writes a number value; non-finite numbers (which JSON cannot express) become `null`.
    public mutating func double(_ value: Double) {
        separator()
        if value.isFinite {
            var text = value.description
            text.withUTF8 { append($0) }
        } else {
            append("null")
        }
    }

    /// Writes `true` or `false`.
    public mutating func bool(_ value: Bool) {
        separator()
        append(value ? "true" : "false")
    }

    /// Writes `null`.
    public mutating func null() {
        separator()
        append("null")
    }

    /// Writes a date as a quoted `YYYY-MM-DDTHH:MM:SS.mmmZ` string.
    public mutating func isoDate(milliseconds: Int64) {
        separator()
        let start = reserve(ParseDate.length + 2)
        start[0] = UInt8(ascii: "\"")
        ParseDate.write(milliseconds: milliseconds, to: start + 1)
        start[ParseDate.length + 1] = UInt8(ascii: "\"")
        count += ParseDate.length + 2
    }

    /// Writes a date as Parse's `{"__type":"Date","iso":"…"}` object (a field's value; the built-in
    /// `createdAt`/`updatedAt` are plain `isoDate` strings).
    public mutating func parseDate(milliseconds: Int64) {
        separator()
        append("{\"__type\":\"Date\",\"iso\":")
        needsComma = false
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
        json.withUnsafeBufferPointer { raw(utf8: $0) }
    }

    /// Appends already-serialised JSON as one value from bytes only valid during the call (a
    /// column's text; the caller vouches for its validity).
    public mutating func raw(utf8 json: UnsafeBufferPointer<UInt8>) {
        separator()
        append(json)
    }

    /// Writes a string value from UTF-8 bytes the caller vouches are valid UTF-8 (`prefix` and
    /// `infix`, if given, go before it, inside the same quotes; `infix` as it is, so the caller
    /// vouches it needs no escaping): for values copied out of a result without making a String.
    public mutating func string(utf8 value: UnsafeBufferPointer<UInt8>, prefix: [UInt8] = [], infix: [UInt8] = []) {
        separator()
        if prefix.isEmpty && infix.isEmpty && !value.contains(where: Self.needsEscape) {
            appendQuoted(verbatim: value)  // the common case: one copy
            return
        }
        append(UInt8(ascii: "\""))
        prefix.withUnsafeBufferPointer { appendEscaped($0) }
        infix.withUnsafeBufferPointer { append($0) }
        appendEscaped(value)
        append(UInt8(ascii: "\""))
    }

    /// Writes a number already in JSON's syntax (the caller has checked it), e.g. an integer's digits.
    public mutating func number(ascii digits: UnsafeBufferPointer<UInt8>) {
        separator()
        append(digits)
    }

    /// `value` as a JSON string literal, quotes included: the one JSON string escaper, for the
    /// places that write JSON text without a writer (the CLI's one-line reports).
    public static func quoted(_ value: String) -> String {
        var writer = ParseJSONWriter(capacity: value.utf8.count + 2)
        writer.appendQuoted(value)
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    // MARK: - Bytes

    /// The address of room for `extra` more bytes, which the caller writes and then adds to
    /// `count`. Grows (doubling) or copies the storage when it is too small or shared with a copy
    /// of this writer.
    @inline(__always)
    private mutating func reserve(_ extra: Int) -> UnsafeMutablePointer<UInt8> {
        if count + extra > storage.capacity || !isKnownUniquelyReferenced(&storage) {
            storage = storage.copy(count: count, capacity: max(count + extra, storage.capacity * 2))
        }
        return storage.base + count
    }

    @inline(__always)
    private mutating func append(_ byte: UInt8) {
        reserve(1).initialize(to: byte)
        count += 1
    }

    private mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
        reserve(bytes.count).update(from: source, count: bytes.count)
        count += bytes.count
    }

    /// Appends a literal (keys, punctuation, `null`) as it is.
    private mutating func append(_ text: StaticString) {
        text.withUTF8Buffer { append($0) }
    }

    /// Appends `value`'s decimal digits (with `-` when negative), written in place.
    private mutating func appendDigits(_ value: Int64) {
        var magnitude = value.magnitude
        var digits = 1
        var power: UInt64 = 10
        while digits < 19 && magnitude >= power {
            digits += 1
            power &*= 10
        }
        let sign = value < 0 ? 1 : 0
        let start = reserve(sign + digits)
        if sign == 1 { start.initialize(to: UInt8(ascii: "-")) }
        var position = sign + digits
        repeat {
            position -= 1
            start[position] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: magnitude % 10)
            magnitude /= 10
        } while position > sign
        count += sign + digits
    }

    private static let hexDigits: StaticString = "0123456789abcdef"

    /// Appends `"value"` with `"`, `\` and control characters escaped. Swift strings hold only
    /// Unicode scalars, so there is never a lone surrogate to write.
    private mutating func appendQuoted(_ value: String) {
        var value = value
        value.withUTF8 { utf8 in
            if !utf8.contains(where: Self.needsEscape) {
                appendQuoted(verbatim: utf8)  // the common case
            } else {
                append(UInt8(ascii: "\""))
                appendEscaped(utf8)
                append(UInt8(ascii: "\""))
            }
        }
    }

    /// Appends `"text"` for text that needs no escaping, in one copy.
    private mutating func appendQuoted(verbatim text: UnsafeBufferPointer<UInt8>) {
        let start = reserve(text.count + 2)
        start.initialize(to: UInt8(ascii: "\""))
        if let source = text.baseAddress { (start + 1).update(from: source, count: text.count) }
        start[text.count + 1] = UInt8(ascii: "\"")
        count += text.count + 2
    }

    @inline(__always)
    private static func needsEscape(_ byte: UInt8) -> Bool { byte < 0x20 || byte == 0x22 || byte == 0x5C }

    /// Appends UTF-8 bytes with `"`, `\` and control characters escaped, copying runs that need
    /// no escaping in one go.
    private mutating func appendEscaped(_ utf8: UnsafeBufferPointer<UInt8>) {
        var runStart = 0
        for position in 0..<utf8.count {
            let byte = utf8[position]
            guard Self.needsEscape(byte) else { continue }
            if runStart < position {
                append(UnsafeBufferPointer(rebasing: utf8[runStart..<position]))
            }
            runStart = position + 1
            append(UInt8(ascii: "\\"))
            switch byte {
            case 0x22: append(0x22)
            case 0x5C: append(0x5C)
            case 0x0A: append(UInt8(ascii: "n"))
            case 0x0D: append(UInt8(ascii: "r"))
            case 0x09: append(UInt8(ascii: "t"))
            case 0x08: append(UInt8(ascii: "b"))
            case 0x0C: append(UInt8(ascii: "f"))
            default:
                append("u00")
                Self.hexDigits.withUTF8Buffer { hex in
                    append(hex[Int(byte >> 4)])
                    append(hex[Int(byte & 0x0F)])
                }
            }
        }
        if runStart < utf8.count {
            append(UnsafeBufferPointer(rebasing: utf8[runStart..<utf8.count]))
        }
    }
}
