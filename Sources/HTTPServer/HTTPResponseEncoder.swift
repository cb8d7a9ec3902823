import Foundation

/// Writes response heads (RFC 9112 §4, §6) into a reused byte buffer, and applies the server's
/// response rules: gzip, `Vary`, the framing fields the server owns. One per event loop.
struct HTTPResponseEncoder {
    private var date = HTTPDate()
    /// `HTTPServerConfiguration.defaultHeaders`: each name, and its whole line ready to append.
    private let defaults: [(name: String, line: [UInt8])]

    /// An encoder adding `defaultHeaders` (the first 64) to responses that do not set them.
    init(defaultHeaders: HTTPHeaders = HTTPHeaders()) {
        defaults = defaultHeaders.fields.prefix(64).compactMap { field in
            let line = Array("\(field.name): \(field.value)\r\n".utf8)
            // A line break would split the head (RFC 9110 §5.5): such a field is never written.
            return line.dropLast(2).contains(where: { $0 == 13 || $0 == 10 }) ? nil : (field.name, line)
        }
    }

    /// Compresses the body with gzip when the client accepts it, the type is compressible, the body is
    /// over 1 KiB, the handler did not encode it already and the status is not 206 or 304. Adds
    /// `Vary: Accept-Encoding` to every response whose encoding depends on the request.
    static func applyContentCoding(_ response: inout HTTPResponse, requestHeaders: HTTPHeaders) {
        guard case .bytes(let bytes) = response.body, bytes.count > HTTPGzip.minimumBytes else { return }
        let status = response.status.code
        guard status != 206, status != 304, status >= 200,
            !response.headers.contains("Content-Encoding"),
            let contentType = response.headers["Content-Type"], HTTPGzip.isCompressible(contentType: contentType)
        else { return }
        if let vary = response.headers["Vary"] {
            if !response.headers.containsToken("Accept-Encoding", in: "Vary") && vary != "*" {
                response.headers["Vary"] = vary + ", Accept-Encoding"
            }
        } else {
            response.headers["Vary"] = "Accept-Encoding"
        }
        guard HTTPGzip.accepts(requestHeaders), let compressed = HTTPGzip.compress(bytes),
            compressed.count < bytes.count
        else { return }
        response.headers["Content-Encoding"] = "gzip"
        response.body = .bytes(compressed)
    }

    /// Whether a response with this status carries no content (RFC 9110 §6.4.1: 1xx, 204, 304).
    static func hasNoContent(_ status: Int) -> Bool { status < 200 || status == 204 || status == 304 }

    /// Appends the status line and header section for `response` to `out`.
    /// `keepAlive` decides `Connection`; HTTP/1.0 clients get an explicit `keep-alive`.
    mutating func encodeHead(
        _ response: HTTPResponse, into out: inout [UInt8], requestID: String, keepAlive: Bool,
        clientVersion: HTTPVersion
    ) {
        let status = response.status.code
        // RFC 9112 §4: status-line = HTTP-version SP status-code SP [ reason-phrase ] CRLF.
        Self.append("HTTP/1.1 ", to: &out)
        out.append(UInt8(truncatingIfNeeded: 0x30 + status / 100 % 10))
        out.append(UInt8(truncatingIfNeeded: 0x30 + status / 10 % 10))
        out.append(UInt8(truncatingIfNeeded: 0x30 + status % 10))
        out.append(0x20)
        Self.withBytes(response.status.reason) { out.append(contentsOf: $0) }
        Self.append("\r\n", to: &out)

        var handlerSetDate = false
        var handlerSetServer = false
        var handlerSetDefaults: UInt64 = 0
        for field in response.headers.fields {
            let name = field.name
            for (i, fallback) in defaults.enumerated() where name.caseInsensitiveEquals(fallback.name) {
                handlerSetDefaults |= 1 << UInt64(i)
            }
            switch name.utf8.count {
            case 4 where name.caseInsensitiveEquals("Date"):
                handlerSetDate = true
            case 6 where name.caseInsensitiveEquals("Server"):
                handlerSetServer = true
            case 10 where name.caseInsensitiveEquals("Connection"),
                14 where name.caseInsensitiveEquals("Content-Length"),
                17 where name.caseInsensitiveEquals("Transfer-Encoding"):
                continue  // framing is the server's job
            default:
                break
            }
            Self.withBytes(name) { name in
                Self.withBytes(field.value) { value in
                    // Never let CR or LF from a handler split the response (RFC 9110 §5.5).
                    if Self.hasLineBreak(name) || Self.hasLineBreak(value) { return }
                    out.append(contentsOf: name)
                    out.append(0x3A)
                    out.append(0x20)
                    out.append(contentsOf: value)
                    out.append(13)
                    out.append(10)
                }
            }
        }
        if !handlerSetDate {
            Self.append("Date: ", to: &out)
            out.append(contentsOf: date.current())
            Self.append("\r\n", to: &out)
        }
        if !handlerSetServer { Self.append("Server: galleryd\r\n", to: &out) }
        for (i, fallback) in defaults.enumerated() where handlerSetDefaults & (1 << UInt64(i)) == 0 {
            out.append(contentsOf: fallback.line)
        }
        Self.append("X-Request-Id: ", to: &out)
        Self.withBytes(requestID) { out.append(contentsOf: $0) }
        Self.append("\r\n", to: &out)
        // RFC 9110 §8.6: no Content-Length in 1xx or 204; a 304 would announce the 200's length, which we
        // do not know, so it is left out there too.
        if !Self.hasNoContent(status) {
            Self.append("Content-Length: ", to: &out)
            Self.appendDecimal(response.body.count, to: &out)
            Self.append("\r\n", to: &out)
        }
        if !keepAlive {
            Self.append("Connection: close\r\n", to: &out)
        } else if clientVersion == .http10 {
            Self.append("Connection: keep-alive\r\n", to: &out)
        }
        Self.append("\r\n", to: &out)
    }

    /// The whole of a response with an in-memory (or no) body, head and body in one buffer: for
    /// the answers written with one best-effort send just before a close (a refused connection's
    /// 503, a timeout's 408), outside a connection's `HTTPResponseWriter`. Other body kinds are
    /// not sent (their `Content-Length` is still announced: callers give bytes or nothing).
    mutating func encode(
        _ response: HTTPResponse, requestID: String, keepAlive: Bool, clientVersion: HTTPVersion
    ) -> [UInt8] {
        var out: [UInt8] = []
        encodeHead(response, into: &out, requestID: requestID, keepAlive: keepAlive, clientVersion: clientVersion)
        if case .bytes(let body) = response.body { out += body }
        return out
    }

    @inline(__always)
    private static func append(_ text: StaticString, to out: inout [UInt8]) {
        out.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// Whether CR or LF occurs: two `memchr`s, which scan words at a time, instead of a loop over
    /// every byte of every field (decision 041).
    private static func hasLineBreak(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return false }
        return memchr(base, 13, bytes.count) != nil || memchr(base, 10, bytes.count) != nil
    }

    /// The string's UTF-8 bytes in place (native strings are contiguous; others are copied once).
    @inline(__always)
    private static func withBytes(_ s: String, _ body: (UnsafeBufferPointer<UInt8>) -> Void) {
        if s.utf8.withContiguousStorageIfAvailable(body) != nil { return }
        var copy = s
        copy.makeContiguousUTF8()
        copy.utf8.withContiguousStorageIfAvailable(body)
    }

    private static func appendDecimal(_ value: Int, to out: inout [UInt8]) {
        if value < 10 {
            out.append(UInt8(truncatingIfNeeded: 0x30 + value))
            return
        }
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // room for 24 digits
        var n = value
        var count = 0
        withUnsafeMutableBytes(of: &digits) { raw in
            while n > 0 {
                raw[count] = UInt8(truncatingIfNeeded: 0x30 + n % 10)
                n /= 10
                count += 1
            }
            for i in stride(from: count - 1, through: 0, by: -1) { out.append(raw[i]) }
        }
    }
}
