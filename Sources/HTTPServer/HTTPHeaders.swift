import Foundation

/// An ordered list of header fields with case-insensitive lookup (RFC 9110 §5).
///
/// Order and repeated fields are kept as received, so a parser can detect duplicates
/// and a writer emits exactly what a handler set.
public struct HTTPHeaders: Sendable, Sequence, ExpressibleByDictionaryLiteral {
    /// One field. A struct rather than a pair: a list of them is copied and destroyed by compiled
    /// code, where a list of pairs goes through the runtime's generic tuple witnesses, about ninety
    /// instructions a field, for each request and each response (decision 041).
    public struct Field: Sendable {
        /// The name as received or set.
        public var name: String
        /// The value.
        public var value: String
    }

    /// The fields in order, names as received.
    public private(set) var fields: [Field]

    /// An empty list.
    public init() { fields = [] }

    /// Fields from a list of pairs, in order.
    public init(_ fields: [(String, String)]) { self.fields = fields.map { Field(name: $0.0, value: $0.1) } }

    public init(dictionaryLiteral elements: (String, String)...) { self.init(elements) }

    /// The first value of the named field, or nil.
    public subscript(name: String) -> String? {
        get { firstIndex(of: name).map { fields[$0].value } }
        set {
            remove(name)
            if let newValue { fields.append(Field(name: name, value: newValue)) }
        }
    }

    /// Every value of the named field, in order.
    public func values(_ name: String) -> [String] {
        fields.filter { $0.name.caseInsensitiveEquals(name) }.map(\.value)
    }

    /// Whether the named field is present.
    public func contains(_ name: String) -> Bool { firstIndex(of: name) != nil }

    /// Appends a field, keeping any earlier one of the same name.
    public mutating func add(_ name: String, _ value: String) { fields.append(Field(name: name, value: value)) }

    /// Removes every field of that name.
    public mutating func remove(_ name: String) {
        // Setting a field the list does not have yet (most of them) is then one scan, not a
        // partition of the whole list and a uniqueness check.
        guard firstIndex(of: name) != nil else { return }
        fields.removeAll { $0.name.caseInsensitiveEquals(name) }
    }

    /// The index of the first field of that name, or nil. The fields are read in place and told
    /// apart by their name's length before any comparison: a lookup among fields of other names
    /// (nearly every one: a request's `X-Gallery-Simulate`, a response's CORS fields) copies no
    /// field and compares no bytes (decision 041).
    func firstIndex(of name: String) -> Int? {
        let length = name.utf8.count
        return fields.withUnsafeBufferPointer { fields in
            for index in fields.indices where fields[index].name.utf8.count == length {
                if fields[index].name.caseInsensitiveEquals(name) { return index }
            }
            return nil
        }
    }

    /// Whether a comma-separated field (e.g. `Connection`, `Accept-Encoding`) lists the token,
    /// ignoring case, whitespace and parameters (RFC 9110 §5.6.1).
    public func containsToken(_ token: String, in name: String) -> Bool {
        // Runs for every request and response (Connection), so it scans bytes instead of splitting.
        for field in fields where field.name.caseInsensitiveEquals(name) {
            if Self.value(field.value, lists: token) { return true }
        }
        return false
    }

    /// Whether one field's comma-separated value lists the token (as `containsToken`).
    static func value(_ value: String, lists token: String) -> Bool {
        value.utf8.withContiguousStorageIfAvailable { list($0, contains: token) }
            ?? Array(value.utf8).withUnsafeBufferPointer { list($0, contains: token) }
    }

    private static func list(_ value: UnsafeBufferPointer<UInt8>, contains token: String) -> Bool {
        var start = 0
        while start <= value.count {
            var end = start
            while end < value.count && value[end] != UInt8(ascii: ",") { end += 1 }
            // The element's token: up to any ';' parameters, without surrounding spaces and tabs.
            var tokenEnd = start
            while tokenEnd < end && value[tokenEnd] != UInt8(ascii: ";") { tokenEnd += 1 }
            var a = start
            var b = tokenEnd
            while a < b && (value[a] == 0x20 || value[a] == 0x09) { a += 1 }
            while b > a && (value[b - 1] == 0x20 || value[b - 1] == 0x09) { b -= 1 }
            if b - a == token.utf8.count {
                var equal = true
                var i = a
                for y in token.utf8 {
                    let x = value[i]
                    let lx = (x >= 65 && x <= 90) ? x | 0x20 : x
                    let ly = (y >= 65 && y <= 90) ? y | 0x20 : y
                    if lx != ly {
                        equal = false
                        break
                    }
                    i += 1
                }
                if equal { return true }
            }
            start = end + 1
        }
        return false
    }

    /// Reserves room for `n` fields (the parser knows the count up front).
    mutating func reserve(_ n: Int) { fields.reserveCapacity(n) }

    /// Whether field `index` exists and is `name: value` byte for byte (the parser, refilling a
    /// connection's list in place: decision 041, round 7). Reads the list in place.
    func field(_ index: Int, is name: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) -> Bool {
        guard index < fields.count else { return false }
        return fields.withUnsafeBufferPointer { fields in
            Self.bytes(of: fields[index].name, equal: name) && Self.bytes(of: fields[index].value, equal: value)
        }
    }

    /// Whether the string's UTF-8 is `bytes`.
    private static func bytes(of string: String, equal bytes: UnsafeRawBufferPointer) -> Bool {
        guard string.utf8.count == bytes.count else { return false }
        guard let other = bytes.baseAddress, bytes.count > 0 else { return true }
        return string.utf8.withContiguousStorageIfAvailable { memcmp($0.baseAddress!, other, bytes.count) == 0 }
            ?? false
    }

    /// Replaces field `index`, or appends the field when `index` is the count.
    mutating func set(_ index: Int, _ field: Field) {
        if index < fields.count { fields[index] = field } else { fields.append(field) }
    }

    /// Drops the fields from `count` on (the parser, after refilling fewer than the list held).
    mutating func truncate(to count: Int) {
        if fields.count > count { fields.removeSubrange(count...) }
    }

    /// The number of fields.
    public var count: Int { fields.count }

    /// The fields in order, each as a `(name, value)` pair.
    public func makeIterator() -> Iterator { Iterator(fields: fields.makeIterator()) }

    /// Hands out the fields as `(name, value)` pairs.
    public struct Iterator: IteratorProtocol {
        var fields: IndexingIterator<[Field]>

        public mutating func next() -> (name: String, value: String)? {
            fields.next().map { (name: $0.name, value: $0.value) }
        }
    }
}

extension String {
    /// ASCII case-insensitive comparison, as header names and tokens need (RFC 9110 §5.1).
    @inlinable
    public func caseInsensitiveEquals(_ other: String) -> Bool {
        guard utf8.count == other.utf8.count else { return false }
        // In place (every request looks up its keys by name among its fields); a string without
        // contiguous UTF-8 (bridged) is compared through copies.
        let equal = utf8.withContiguousStorageIfAvailable { a in
            other.utf8.withContiguousStorageIfAvailable { b in Self.caseInsensitiveEquals(a, b) }
        }
        return (equal ?? nil) ?? Self.caseInsensitiveEquals(Array(utf8), Array(other.utf8))
    }

    /// `caseInsensitiveEquals` of two byte strings of the same length.
    @usableFromInline
    static func caseInsensitiveEquals(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>)
        -> Bool
    {
        for index in 0..<a.count where a[index] != b[index] {
            let x = a[index]
            let y = b[index]
            let lx = (x >= 65 && x <= 90) ? x | 0x20 : x
            let ly = (y >= 65 && y <= 90) ? y | 0x20 : y
            if lx != ly { return false }
        }
        return true
    }

    /// `caseInsensitiveEquals` of two byte arrays of the same length.
    @usableFromInline
    static func caseInsensitiveEquals(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        a.withUnsafeBufferPointer { a in b.withUnsafeBufferPointer { b in caseInsensitiveEquals(a, b) } }
    }

    /// The string without leading and trailing spaces and tabs (optional whitespace, RFC 9110 §5.6.3).
    public func trimmingSpaces() -> String {
        var s = Substring(self)
        while let f = s.first, f == " " || f == "\t" { s = s.dropFirst() }
        while let l = s.last, l == " " || l == "\t" { s = s.dropLast() }
        return String(s)
    }
}
