import CZlib

/// gzip for response bodies (RFC 9110 §8.4.1.3) through zlib, and the rules for when to use it.
public enum HTTPGzip {
    /// Bodies at or below this size are sent as they are: the gzip header and a CPU pass cost more
    /// than the bytes they save.
    public static let minimumBytes = 1024

    /// The body compressed as a gzip member (deflateInit2 with windowBits 31), or nil if zlib failed.
    public static func compress(_ input: [UInt8], level: Int32 = 6) -> [UInt8]? {
        var stream = z_stream()
        let initResult = deflateInit2_(
            &stream, level, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY, zlibVersion(), Int32(MemoryLayout<z_stream>.size))
        guard initResult == Z_OK else { return nil }
        defer { deflateEnd(&stream) }
        let bound = Int(deflateBound(&stream, UInt(input.count)))
        var output = [UInt8](repeating: 0, count: bound)
        let result: Int32 = input.withUnsafeBufferPointer { source in
            output.withUnsafeMutableBufferPointer { destination in
                stream.next_in = UnsafeMutablePointer(mutating: source.baseAddress)
                stream.avail_in = UInt32(source.count)
                stream.next_out = destination.baseAddress
                stream.avail_out = UInt32(destination.count)
                return deflate(&stream, Z_FINISH)
            }
        }
        guard result == Z_STREAM_END else { return nil }
        output.removeLast(bound - Int(stream.total_out))
        return output
    }

    /// Whether a media type is worth compressing: text, JSON, XML, JavaScript, SVG. Images and
    /// archives are already compressed.
    /// Runs for every in-memory body over 1 KiB, so it reads the bytes in place: no split, no
    /// lower-cased copy.
    static func isCompressible(contentType: String) -> Bool {
        if let answer = contentType.utf8.withContiguousStorageIfAvailable(isCompressible) { return answer }
        return Array(contentType.utf8).withUnsafeBufferPointer(isCompressible)
    }

    /// The media types worth compressing besides `text/*`, `*+json` and `*+xml`, lower case.
    private static let compressibleTypes: [StaticString] = [
        "application/json", "application/xml", "application/javascript", "application/x-javascript",
        "application/ecmascript", "image/svg+xml", "application/wasm",
    ]

    /// `isCompressible` on the field value's bytes: the media type is what precedes any `;`
    /// parameters, without surrounding spaces and tabs, compared ignoring ASCII case.
    private static func isCompressible(_ value: UnsafeBufferPointer<UInt8>) -> Bool {
        var end = 0
        while end < value.count && value[end] != UInt8(ascii: ";") { end += 1 }
        var start = 0
        while start < end && (value[start] == 0x20 || value[start] == 0x09) { start += 1 }
        while end > start && (value[end - 1] == 0x20 || value[end - 1] == 0x09) { end -= 1 }
        let type = UnsafeBufferPointer(rebasing: value[start..<end])
        if hasPrefix(type, "text/") || hasSuffix(type, "+json") || hasSuffix(type, "+xml") { return true }
        for known in compressibleTypes where known.utf8CodeUnitCount == type.count && hasPrefix(type, known) {
            return true
        }
        return false
    }

    /// Whether `bytes` starts with the lower-case ASCII `prefix`, ignoring case.
    private static func hasPrefix(_ bytes: UnsafeBufferPointer<UInt8>, _ prefix: StaticString) -> Bool {
        equalsIgnoringCase(bytes, at: 0, prefix)
    }

    /// Whether `bytes` ends with the lower-case ASCII `suffix`, ignoring case.
    private static func hasSuffix(_ bytes: UnsafeBufferPointer<UInt8>, _ suffix: StaticString) -> Bool {
        equalsIgnoringCase(bytes, at: bytes.count - suffix.utf8CodeUnitCount, suffix)
    }

    private static func equalsIgnoringCase(_ bytes: UnsafeBufferPointer<UInt8>, at offset: Int, _ lower: StaticString)
        -> Bool
    {
        let count = lower.utf8CodeUnitCount
        guard offset >= 0, offset + count <= bytes.count else { return false }
        let letters = lower.utf8Start
        for k in 0..<count {
            let byte = bytes[offset + k]
            let folded = (byte >= 65 && byte <= 90) ? byte | 0x20 : byte
            if folded != letters[k] { return false }
        }
        return true
    }

    /// Whether `Accept-Encoding` allows gzip (RFC 9110 §12.5.3): `gzip` or `x-gzip` with q > 0, or `*`
    /// with q > 0 when gzip is not named.
    public static func accepts(_ headers: HTTPHeaders) -> Bool {
        var gzipQ: Double?
        var starQ: Double?
        for value in headers.values("Accept-Encoding") {
            for element in value.split(separator: ",") {
                let parts = element.split(separator: ";")
                guard let first = parts.first else { continue }
                let coding = String(first).trimmingSpaces().lowercased()
                var q = 1.0
                for parameter in parts.dropFirst() {
                    let p = String(parameter).trimmingSpaces()
                    if p.hasPrefix("q=") || p.hasPrefix("Q=") { q = Double(p.dropFirst(2)) ?? 0 }
                }
                if coding == "gzip" || coding == "x-gzip" {
                    gzipQ = q
                } else if coding == "*" {
                    starQ = q
                }
            }
        }
        if let gzipQ { return gzipQ > 0 }
        if let starQ { return starQ > 0 }
        return false
    }
}
