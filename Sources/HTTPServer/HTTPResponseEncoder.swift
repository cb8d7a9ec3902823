import Foundation

/// Writes response heads (RFC 9112 §4, §6) into a reused byte buffer, and applies the server's
/// response rules: gzip, `Vary`, the framing fields the server owns. One per event loop.
///
/// The lines the server adds to nearly every answer (`Date`, `Server`, the default headers and the
/// start of `X-Request-Id`) are kept pre-encoded as one run of bytes, remade once a second when the
/// date changes: a head is then its status line, the handler's fields, that run, the request id
/// and the framing fields, written into raw memory kept from head to head (`ScratchBytes`): a
/// connection's own, which it sends from, or the encoder's, handed over in one append (decision
/// 041). A handler's field list that comes twice in a row has its lines copied as first written
/// (round 7). Copies of an encoder share that memory: each event loop has its own encoder, used
/// on its thread only.
struct HTTPResponseEncoder {
    private var date = HTTPDate()
    /// `HTTPServerConfiguration.defaultHeaders`: each name, and its whole line ready to append.
    private let defaults: [(name: String, line: [UInt8])]
    /// Bit n is set when a default header's name is n bytes long (names of 64 bytes or more set
    /// bit 63): a handler's field whose length is not among them is no default, with no compare.
    private let defaultNameLengths: UInt64
    /// `Date: <now>`, `Server: galleryd`, every default line and `X-Request-Id: `, for `serverLinesSecond`.
    private var serverLines: [UInt8] = []
    /// The second (`time(nil)`) `serverLines` was made for; -1 before the first head.
    private var serverLinesSecond = -1
    /// Where each head is written before it goes to the caller's buffer in one append.
    private let head = ScratchBytes()
    /// The handler field list last written, kept so that its storage cannot be freed and taken by
    /// another list: while it is kept, a list with the same storage and count is the same fields (a
    /// shared list is copied before it changes). `lastFieldsIdentity` is that storage.
    private var lastFields: [HTTPHeaders.Field] = []
    private var lastFieldsIdentity: UnsafeRawPointer?
    /// The lines `lastFields` was written as, and what they told, once it came twice in a row (a
    /// response kept in memory and returned again, as `/health`'s): then they are copied as they
    /// are, with no name compared and no byte scanned (decision 041, round 7).
    private let lastFieldLines = ScratchBytes(capacity: 256)
    private var lastFieldFacts: FieldFacts?
    /// How many heads had their field lines copied from `lastFieldLines` (tests).
    private(set) var keptFieldLinesCopied = 0

    /// An encoder adding `defaultHeaders` (the first 64) to responses that do not set them.
    init(defaultHeaders: HTTPHeaders = HTTPHeaders()) {
        defaults = defaultHeaders.fields.prefix(64).compactMap { field in
            let line = Array("\(field.name): \(field.value)\r\n".utf8)
            // A line break would split the head (RFC 9110 §5.5): such a field is never written.
            return line.dropLast(2).contains(where: { $0 == 13 || $0 == 10 }) ? nil : (field.name, line)
        }
        defaultNameLengths = defaults.reduce(0) { $0 | Self.lengthBit($1.name.utf8.count) }
    }

    /// The bit of `defaultNameLengths` for a name of `count` bytes.
    @inline(__always)
    private static func lengthBit(_ count: Int) -> UInt64 { 1 << UInt64(min(count, 63)) }

    /// Whether `applyContentCoding` may change `response` (a body in memory over the minimum): the
    /// test it starts with, without the request's fields, which the caller reads only then.
    @inline(__always)
    static func mayCompress(_ response: borrowing HTTPResponse) -> Bool {
        if case .bytes = response.body { return response.body.count > HTTPGzip.minimumBytes }
        return false
    }

    /// Compresses the body with gzip when the client accepts it, the type is compressible, the body is
    /// over 1 KiB, the handler did not encode it already and the status is not 206 or 304. Adds
    /// `Vary: Accept-Encoding` to every response whose encoding depends on the request.
    static func applyContentCoding(_ response: inout HTTPResponse, requestHeaders: HTTPHeaders) {
        guard case .bytes(let bytes) = response.body, bytes.count > HTTPGzip.minimumBytes else { return }
        let status = response.status.code
        // The type first: most bodies over the minimum are images, refused by one field lookup.
        guard status != 206, status != 304, status >= 200,
            let contentType = response.headers["Content-Type"], HTTPGzip.isCompressible(contentType: contentType),
            !response.headers.contains("Content-Encoding")
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
        encodeHead(response, into: &out, requestID: requestID, clientVersion: clientVersion) { _ in keepAlive }
    }

    /// As `encodeHead(_:into:requestID:keepAlive:clientVersion:)`, the connection's fate decided
    /// by `keepAlive` from whether the handler's `Connection` field lists `close`: found while the
    /// fields are written, not by a scan of its own (the connection's state machine decides).
    mutating func encodeHead(
        _ response: HTTPResponse, into out: inout [UInt8], requestID: String, clientVersion: HTTPVersion,
        keepAlive decide: (_ closeRequested: Bool) -> Bool
    ) {
        let head = self.head
        head.removeAll()
        encodeHead(response, into: head, requestID: requestID, clientVersion: clientVersion, keepAlive: decide)
        out.append(contentsOf: head.bytes)
    }

    /// As `encodeHead(_:into:requestID:clientVersion:keepAlive:)`, appended to `head`: a
    /// connection's own buffer, sent from there (no copy into an array, decision 041, round 7).
    mutating func encodeHead(
        _ response: HTTPResponse, into head: ScratchBytes, requestID: String, clientVersion: HTTPVersion,
        keepAlive decide: (_ closeRequested: Bool) -> Bool
    ) {
        let status = response.status.code
        // RFC 9112 §4: status-line = HTTP-version SP status-code SP [ reason-phrase ] CRLF.
        if status == 200 && response.status.reason == "OK" {
            head.append("HTTP/1.1 200 OK\r\n")
        } else {
            head.append("HTTP/1.1 ")
            head.append(UInt8(truncatingIfNeeded: 0x30 + status / 100 % 10))
            head.append(UInt8(truncatingIfNeeded: 0x30 + status / 10 % 10))
            head.append(UInt8(truncatingIfNeeded: 0x30 + status % 10))
            head.append(0x20)
            Self.withBytes(response.status.reason) { head.append($0) }
            head.append("\r\n")
        }

        // The handler's fields: the lines written for the same list last time when it is the same
        // list again (a response kept in memory, such as `/health`'s), else written and checked.
        let fields = response.headers.fields
        let identity = fields.withUnsafeBufferPointer { UnsafeRawPointer($0.baseAddress) }
        let seenBefore = identity == lastFieldsIdentity && fields.count == lastFields.count
        var facts = FieldFacts()
        if seenBefore, let kept = lastFieldFacts {
            head.append(lastFieldLines.bytes(from: 0))
            facts = kept
            keptFieldLinesCopied &+= 1
        } else {
            let fieldsStart = head.count
            for field in fields {
                let name = field.name
                let nameLength = name.utf8.count
                if defaultNameLengths & Self.lengthBit(nameLength) != 0 {
                    for (i, fallback) in defaults.enumerated() where name.caseInsensitiveEquals(fallback.name) {
                        facts.setDefaults |= 1 << UInt64(i)
                    }
                }
                switch nameLength {
                case 4 where name.caseInsensitiveEquals("Date"):
                    facts.setDate = true
                case 6 where name.caseInsensitiveEquals("Server"):
                    facts.setServer = true
                case 10 where name.caseInsensitiveEquals("Connection"):
                    if !facts.closeRequested { facts.closeRequested = HTTPHeaders.value(field.value, lists: "close") }
                    continue  // framing is the server's job
                default:
                    if Self.isFraming(name, length: nameLength) { continue }
                }
                Self.withBytes(name) { name in
                    Self.withBytes(field.value) { value in
                        // Never let CR or LF from a handler split the response (RFC 9110 §5.5): a
                        // field with one is left out. Its name and value are first tested for any
                        // byte below 14 a word at a time, without a branch, and only then for CR
                        // and LF, rather than every CR and LF of the written lines counted (they
                        // hold two each; decision 041, round 7).
                        if ASCIIScan.hasByteBelow14(name) || ASCIIScan.hasByteBelow14(value),
                            ASCIIScan.hasLineBreak(name) || ASCIIScan.hasLineBreak(value)
                        {
                            return
                        }
                        head.appendField(name, value)
                    }
                }
            }
            if seenBefore {
                // The same list twice in a row: its lines are kept for the next time.
                lastFieldLines.removeAll()
                lastFieldLines.append(head.bytes(from: fieldsStart))
                lastFieldFacts = facts
            } else {
                lastFields = fields
                lastFieldsIdentity = identity
                lastFieldFacts = nil
            }
        }
        let handlerSetDate = facts.setDate
        let handlerSetServer = facts.setServer
        let handlerSetDefaults = facts.setDefaults
        let closeRequested = facts.closeRequested
        if !handlerSetDate && !handlerSetServer && handlerSetDefaults == 0 {
            // What nearly every answer gets, pre-encoded for this second (up to `X-Request-Id: `).
            let now = time(nil)
            if now != serverLinesSecond { makeServerLines(second: now) }
            head.append(serverLines)
        } else {
            if !handlerSetDate {
                head.append("Date: ")
                head.append(date.current())
                head.append("\r\n")
            }
            if !handlerSetServer { head.append("Server: galleryd\r\n") }
            for (i, fallback) in defaults.enumerated() where handlerSetDefaults & (1 << UInt64(i)) == 0 {
                head.append(fallback.line)
            }
            head.append("X-Request-Id: ")
        }
        Self.withBytes(requestID) { head.append($0) }
        // RFC 9110 §8.6: no Content-Length in 1xx or 204; a 304 would announce the 200's length, which we
        // do not know, so it is left out there too.
        if !Self.hasNoContent(status) {
            head.append("\r\nContent-Length: ")
            head.appendDecimal(response.body.count)
        }
        let keepAlive = decide(closeRequested)
        if !keepAlive {
            head.append("\r\nConnection: close\r\n\r\n")
        } else if clientVersion == .http10 {
            head.append("\r\nConnection: keep-alive\r\n\r\n")
        } else {
            head.append("\r\n\r\n")
        }
    }

    /// What a handler's fields told the encoder as they were written.
    private struct FieldFacts {
        /// The handler set `Date`, `Server`, or the defaults of these bits (`defaults`' order).
        var setDate = false
        var setServer = false
        var setDefaults: UInt64 = 0
        /// Its `Connection` field lists `close`.
        var closeRequested = false
    }

    /// Whether a handler's field (`length` bytes of name) is one of the framing fields the server
    /// writes itself: `Connection`, `Content-Length`, `Transfer-Encoding`.
    @inline(__always)
    private static func isFraming(_ name: String, length: Int) -> Bool {
        switch length {
        case 10: return name.caseInsensitiveEquals("Connection")
        case 14: return name.caseInsensitiveEquals("Content-Length")
        case 17: return name.caseInsensitiveEquals("Transfer-Encoding")
        default: return false
        }
    }

    /// Makes `serverLines` for `second`: the `Date` of that second, `Server`, every default line and
    /// `X-Request-Id: `, in the order a head written field by field has them.
    private mutating func makeServerLines(second: Int) {
        serverLinesSecond = second
        var lines = Array("Date: ".utf8)
        lines.append(contentsOf: date.current())
        lines.append(contentsOf: "\r\nServer: galleryd\r\n".utf8)
        for fallback in defaults { lines.append(contentsOf: fallback.line) }
        lines.append(contentsOf: "X-Request-Id: ".utf8)
        serverLines = lines
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

    /// The string's UTF-8 bytes in place (native strings are contiguous; others are copied once).
    @inline(__always)
    private static func withBytes(_ s: String, _ body: (UnsafeRawBufferPointer) -> Void) {
        if s.utf8.withContiguousStorageIfAvailable({ body(UnsafeRawBufferPointer($0)) }) != nil { return }
        var copy = s
        copy.makeContiguousUTF8()
        copy.utf8.withContiguousStorageIfAvailable { body(UnsafeRawBufferPointer($0)) }
    }
}
