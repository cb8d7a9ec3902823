/// Decodes a URL query component (`where=%7B%7D&limit=10`) or a form body into name/value pairs
/// the way HTML forms and SDKs encode them (`+` is a space, `%XX` a byte), refusing malformed
/// escapes and invalid UTF-8 rather than silently replacing bytes. Byte-level, without Foundation:
/// the Flickr and Parse routes decode a query on every request.
public enum HTTPQueryString {
    /// Why a query could not be decoded.
    public enum Failure: Error, Equatable, Sendable {
        /// A `%` not followed by two hex digits.
        case malformedPercentEncoding
        /// The decoded bytes are not UTF-8.
        case invalidUTF8
    }

    /// The decoded `(name, value)` pairs in order; a pair without `=` has an empty value and
    /// empty segments (`a=1&&b=2`) are skipped.
    public static func decode(_ query: Substring) throws(Failure) -> [(name: String, value: String)] {
        var items: [(name: String, value: String)] = []
        for segment in query.utf8.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            let parts = segment.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
            let name = try decodeComponent(parts[0])
            let value = parts.count > 1 ? try decodeComponent(parts[1]) : ""
            items.append((name: name, value: value))
        }
        return items
    }

    /// Like `decode(_:)` for a `String`.
    public static func decode(_ query: String) throws(Failure) -> [(name: String, value: String)] {
        try decode(Substring(query))
    }

    /// One percent-encoded component; a component without `%` or `+` is copied as it is.
    public static func decodeComponent(_ encoded: Substring.UTF8View.SubSequence) throws(Failure) -> String {
        if !encoded.contains(where: { $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: "+") }) {
            return String(Substring(encoded))
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(encoded.count)
        var iterator = encoded.makeIterator()
        while let byte = iterator.next() {
            switch byte {
            case UInt8(ascii: "+"):
                bytes.append(UInt8(ascii: " "))
            case UInt8(ascii: "%"):
                guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                    throw .malformedPercentEncoding
                }
                bytes.append(high << 4 | low)
            default:
                bytes.append(byte)
            }
        }
        guard let string = String(validating: bytes, as: UTF8.self) else { throw .invalidUTF8 }
        return string
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
