import Foundation

/// An incremental, strict HTTP/1.1 request parser (RFC 9112).
///
/// Feed it the unconsumed bytes of the connection; each call returns at most one event and how many
/// bytes it consumed. A head is only consumed once complete (the bytes stay in the caller's buffer,
/// scanning resumes where it stopped), body bytes are handed out as ranges of the input without
/// copying. The same input split anywhere yields the same events (up to how body bytes are split).
struct HTTPRequestParser {
    /// What one step of `step` produced, for the connection: the head and the trailers stay in
    /// the parser (`head`, `takeTrailers()`), so the event holds numbers only. A whole head in the
    /// event made it a large value, moved and destroyed through its type's value witnesses on every
    /// request (decision 041, round 7).
    enum Step {
        /// Nothing produced (more bytes needed, or some consumed without an event).
        case nothing
        /// A complete, validated request head: `head`.
        case head
        /// Decoded body bytes: a range of the input passed to `step`.
        case body(Range<Int>)
        /// The end of the message; its trailer fields are `takeTrailers()`.
        case end
    }

    /// Where the parser is in the message; the chunked body's states are read by
    /// `HTTPRequestParser+ChunkedBody`.
    enum State {
        case head
        case fixedBody(remaining: Int)
        case chunkSize
        case chunkData(remaining: Int)
        case chunkDataEnd
        case trailers
        case endPending
    }

    static let cr: UInt8 = 13
    static let lf: UInt8 = 10
    static let sp: UInt8 = 32
    static let htab: UInt8 = 9

    /// The limits in force.
    let limits: HTTPLimits
    /// The largest body allowed for the current message; the connection sets it from the route after the head.
    var bodyLimit: Int
    /// Method and target of the current request line once parsed, so errors in later fields can
    /// still be rendered by the right error responder.
    var requestLine: (method: String, target: String)? {
        hasRequestLine ? (head.method.rawValue, head.target) : nil
    }
    /// Runs `body` with the head read in place: a mutating call borrows it, where a read of
    /// `parser.head.target` from the connection copies the string (a retain and a release;
    /// decision 041, round 9).
    @inline(__always)
    mutating func withHead<Result>(_ body: (HTTPRequestHead) -> Result) -> Result { body(head) }

    /// Hands the head's method and target to the request made of it, swapped with the ones the
    /// request held before: no reference count for either (decision 041, round 9). From then on
    /// `head`'s method and target are stale until the next request line, and `requestLine` is nil:
    /// the request holds them.
    mutating func exchangeRequestLine(method: inout HTTPMethod, target: inout String) {
        swap(&head.method, &method)
        swap(&head.target, &target)
        hasRequestLine = false
    }

    /// Whether `head` holds the current request line's method and target (`requestLine`).
    private var hasRequestLine = false
    /// The last head parsed, filled in place for each request; valid from the `.head` step until
    /// the next request line. Its field list is refilled in place for the next head (`buildHead`):
    /// once the previous request is released nothing else shares its storage, so the heads of a
    /// keep-alive connection allocate no list (decision 041); while something does, a refill that
    /// changes a field copies it.
    private(set) var head = HTTPRequestHead(
        method: .get, target: "", version: .http11, headers: HTTPHeaders(), contentLength: nil, chunked: false,
        keepAlive: true, expectContinue: false)

    var state = State.head
    private var scanned = 0
    private var requestLineEnd = -1
    private var lineEnds: [Int] = []
    /// Body bytes announced so far by the chunk sizes, against `bodyLimit`.
    var bodyReceived = 0
    /// Bytes of the trailer section so far, against the head's limit.
    var trailerBytes = 0
    /// The trailer fields of the chunked body being read.
    var trailers = HTTPHeaders()
    /// The trailer fields of the message that just ended, until `takeTrailers()`.
    var endedTrailers = HTTPHeaders()

    /// A parser expecting a request head.
    init(limits: HTTPLimits) {
        self.limits = limits
        self.bodyLimit = limits.maxBodyBytes
        lineEnds.reserveCapacity(16)
    }

    /// Whether the parser is between messages (nothing of the next head seen yet).
    var isIdle: Bool {
        if case .head = state { return scanned == 0 && requestLineEnd < 0 }
        return false
    }

    /// Whether the parser is inside a body.
    var isReadingBody: Bool {
        switch state {
        case .head, .endPending: return false
        default: return true
        }
    }

    /// Parses from the start of `input`; returns what it produced and the number of bytes consumed,
    /// which the caller drops from its buffer before the next call. A head is read from `head`,
    /// the trailers taken with `takeTrailers()` (`next` hands both out in its event).
    mutating func step(_ input: UnsafeRawBufferPointer) throws -> (event: Step, consumed: Int) {
        switch state {
        case .head:
            return try parseHead(input)
        case .fixedBody(let remaining):
            // RFC 9112 §6.3 item 6: exactly Content-Length octets.
            let n = min(remaining, input.count)
            if n == 0 { return (.nothing, 0) }
            state = remaining == n ? .endPending : .fixedBody(remaining: remaining - n)
            return (.body(0..<n), n)
        case .endPending:
            endMessage()
            return (.end, 0)
        case .chunkSize:
            return try parseChunkSize(input)
        case .chunkData(let remaining):
            let n = min(remaining, input.count)
            if n == 0 { return (.nothing, 0) }
            state = remaining == n ? .chunkDataEnd : .chunkData(remaining: remaining - n)
            return (.body(0..<n), n)
        case .chunkDataEnd:
            // RFC 9112 §7.1: chunk = chunk-size [ chunk-ext ] CRLF chunk-data CRLF
            if input.count == 0 { return (.nothing, 0) }
            guard input[0] == Self.cr else { throw HTTPParseError.invalidChunkTerminator }
            if input.count < 2 { return (.nothing, 0) }
            guard input[1] == Self.lf else { throw HTTPParseError.invalidChunkTerminator }
            state = .chunkSize
            return (.nothing, 2)
        case .trailers:
            return try parseTrailerLine(input)
        }
    }

    /// Drops the (empty) body of a request that was answered at its head, so the next call parses
    /// the next request. Only valid for a head without a body.
    mutating func discardEmptyBody() {
        if case .endPending = state { reset() }
    }

    /// Back to expecting a head, with nothing of the finished message kept.
    mutating func reset() {
        state = .head
        scanned = 0
        requestLineEnd = -1
        // After a head both lists are nearly always empty already: then nothing is replaced.
        if !lineEnds.isEmpty { lineEnds.removeAll(keepingCapacity: true) }
        bodyReceived = 0
        trailerBytes = 0
        if trailers.count > 0 { trailers = HTTPHeaders() }
        bodyLimit = limits.maxBodyBytes
        hasRequestLine = false
    }

    // MARK: - Head (RFC 9112 §2.1: start-line *( field-line CRLF ) CRLF)

    private mutating func parseHead(_ p: UnsafeRawBufferPointer) throws -> (event: Step, consumed: Int) {
        guard let base = p.baseAddress, p.count > 0 else { return (.nothing, 0) }
        if requestLineEnd < 0 {
            // RFC 9112 §2.2: a server SHOULD ignore at least one empty line before the request-line.
            var i = 0
            while i + 1 < p.count, p[i] == Self.cr, p[i + 1] == Self.lf { i += 2 }
            if i > 0 {
                scanned = 0
                return (.nothing, i)
            }
            if p[0] == Self.lf { throw HTTPParseError.bareLineFeed }
            if p.count == 1 && p[0] == Self.cr { return (.nothing, 0) }
        }
        while scanned < p.count {
            guard let hit = memchr(base + scanned, Int32(Self.lf), p.count - scanned) else {
                scanned = p.count
                break
            }
            let idx = UnsafeRawPointer(hit) - base
            // RFC 9112 §2.2: lines end in CRLF. A recipient MAY accept a bare LF; we reject it, the
            // strict reading, so we never disagree with a proxy about where a message ends.
            guard idx > 0, p[idx - 1] == Self.cr else { throw HTTPParseError.bareLineFeed }
            scanned = idx + 1
            if requestLineEnd < 0 {
                if idx + 1 > limits.requestLineBytes { throw requestLineTooLong(p) }
                requestLineEnd = idx
                try parseRequestLine(p)
                continue
            }
            if idx - requestLineEnd > limits.headerBytes { throw HTTPParseError.headerSectionTooLarge }
            let lineStart = (lineEnds.last ?? requestLineEnd) + 1
            if idx == lineStart + 1 {
                try buildHead(p)
                return (.head, idx + 1)
            }
            lineEnds.append(idx)
            if lineEnds.count > limits.headerCount { throw HTTPParseError.tooManyHeaderFields }
        }
        if requestLineEnd < 0 {
            if p.count > limits.requestLineBytes { throw requestLineTooLong(p) }
        } else if p.count - requestLineEnd > limits.headerBytes + 2 {
            throw HTTPParseError.headerSectionTooLarge
        }
        return (.nothing, 0)
    }

    /// The 414 error, after noting the method and the path so far as `requestLine`, so the answer
    /// comes in the format of the URL space it was aimed at (a long `/parse` query gets Parse JSON).
    private mutating func requestLineTooLong(_ p: UnsafeRawBufferPointer) -> HTTPParseError {
        let end = min(p.count, limits.requestLineBytes)
        var i = 0
        while i < end, Self.isTchar(p[i]) { i += 1 }
        guard i > 0, i < end, p[i] == Self.sp else { return .requestLineTooLong }
        let methodEnd = i
        i += 1
        let targetStart = i
        // The path only: a query cut anywhere (or an escape cut in half there) must not hide it.
        while i < end, p[i] > 0x20, p[i] < 0x7F, p[i] != 0x3F { i += 1 }
        // Nor may a percent-escape cut in half at the limit.
        if i == end {
            for back in 1...2 where i - back > targetStart && p[i - back] == 0x25 {
                i -= back
                break
            }
        }
        if i > targetStart {
            head.method = HTTPMethod(rawValue: Self.string(p, 0, methodEnd))
            head.target = Self.string(p, targetStart, i)
            hasRequestLine = true
        }
        return .requestLineTooLong
    }

    /// RFC 9112 §3: request-line = method SP request-target SP HTTP-version
    private mutating func parseRequestLine(_ p: UnsafeRawBufferPointer) throws {
        let end = requestLineEnd - 1  // the CR
        var i = 0
        while i < end, Self.isTchar(p[i]) { i += 1 }
        guard i < end, p[i] == Self.sp else {
            throw i < end && p[i] > Self.sp && p[i] != 0x7F
                ? HTTPParseError.invalidMethod : HTTPParseError.invalidRequestLine
        }
        guard i > 0 else { throw HTTPParseError.invalidRequestLine }
        let methodEnd = i
        i += 1
        let targetStart = i
        // RFC 9112 §3.2: the target has no whitespace; we accept visible ASCII only (RFC 3986 chars
        // and a few that clients fail to escape); CTLs, DEL and non-ASCII are rejected. It ends at the
        // first byte that is not visible ASCII, which must be the SP before the version.
        i = ASCIIScan.firstNonVisible(UnsafeRawBufferPointer(rebasing: p[..<end]), from: i)
        if i < end && p[i] != Self.sp { throw HTTPParseError.invalidTarget }
        guard i > targetStart, i < end else { throw HTTPParseError.invalidRequestLine }
        let targetEnd = i
        i += 1
        // RFC 9112 §2.3: HTTP-version = "HTTP" "/" DIGIT "." DIGIT (case-sensitive).
        guard end - i == 8, p[i] == 0x48, p[i + 1] == 0x54, p[i + 2] == 0x54, p[i + 3] == 0x50, p[i + 4] == 0x2F,
            p[i + 6] == 0x2E, Self.isDigit(p[i + 5]), Self.isDigit(p[i + 7])
        else { throw HTTPParseError.invalidRequestLine }
        head.method = HTTPMethod.parse(UnsafeRawBufferPointer(rebasing: p[0..<methodEnd]))
        head.target = Self.string(p, targetStart, targetEnd)
        hasRequestLine = true
        switch (p[i + 5], p[i + 7]) {
        case (0x31, 0x31): head.version = .http11
        case (0x31, 0x30): head.version = .http10
        default: throw HTTPParseError.unsupportedVersion
        }
    }

    /// Completes `head` from its field lines (the request line is in it already). The field list
    /// is the previous head's, refilled in place: a field with the same bytes as the one at its
    /// index (a keep-alive client sends the same fields on each request) is kept as it is, with no
    /// string made and its bytes not checked again (they were); only the others are made anew
    /// (decision 041, round 7).
    private mutating func buildHead(_ p: UnsafeRawBufferPointer) throws {
        let parsedVersion = head.version
        if head.headers.count < lineEnds.count { head.headers.reserve(lineEnds.count) }
        var index = 0
        var contentLength: Int?
        var transferCodings: [String] = []
        var sawTransferEncoding = false
        var hostCount = 0
        var connectionClose = false
        var connectionKeepAlive = false
        var expectContinue = false
        var start = requestLineEnd + 1
        for lineEnd in lineEnds {
            let (nameRange, valueRange) = try Self.fieldLine(p, start, lineEnd - 1)
            start = lineEnd + 1
            let name = UnsafeRawBufferPointer(rebasing: p[nameRange])
            let valueBytes = UnsafeRawBufferPointer(rebasing: p[valueRange])
            if !head.headers.field(index, is: name, valueBytes) {
                try Self.checkValue(valueBytes)
                head.headers.set(
                    index,
                    HTTPHeaders.Field(
                        name: HTTPFieldNames.name(name), value: String(decoding: valueBytes, as: UTF8.self)))
            }
            defer { index += 1 }
            // The value as a string, for the few fields read here.
            var value: String { head.headers.fields[index].value }
            switch nameRange.count {
            case 4 where Self.equalsLower(p, nameRange, "host"):
                hostCount += 1
            case 6 where Self.equalsLower(p, nameRange, "expect"):
                // RFC 9110 §10.1.1: 100-continue is the only expectation defined; HTTP/1.0 ignores it.
                if value.caseInsensitiveEquals("100-continue") {
                    expectContinue = parsedVersion == .http11
                } else if !value.isEmpty {
                    throw HTTPParseError.unsupportedExpectation
                }
            case 10 where Self.equalsLower(p, nameRange, "connection"):
                for token in value.split(separator: ",") {
                    let t = String(token).trimmingSpaces()
                    if t.caseInsensitiveEquals("close") { connectionClose = true }
                    if t.caseInsensitiveEquals("keep-alive") { connectionKeepAlive = true }
                }
            case 14 where Self.equalsLower(p, nameRange, "content-length"):
                // RFC 9112 §6.3 item 5 / RFC 9110 §8.6: 1*DIGIT; a list of identical values may be
                // taken as one, anything else is an unrecoverable framing error.
                for element in value.split(separator: ",", omittingEmptySubsequences: false) {
                    let digits = String(element).trimmingSpaces()
                    guard !digits.isEmpty, digits.utf8.count <= 18, digits.utf8.allSatisfy(Self.isDigit),
                        let n = Int(digits)
                    else { throw HTTPParseError.invalidContentLength }
                    if let previous = contentLength, previous != n { throw HTTPParseError.invalidContentLength }
                    contentLength = n
                }
            case 17 where Self.equalsLower(p, nameRange, "transfer-encoding"):
                sawTransferEncoding = true
                for element in value.split(separator: ",", omittingEmptySubsequences: false) {
                    transferCodings.append(String(element).trimmingSpaces())
                }
            default:
                break
            }
        }
        head.headers.truncate(to: index)
        // RFC 9112 §3.2: a 1.1 request without exactly one Host is answered with 400.
        if parsedVersion == .http11 ? hostCount != 1 : hostCount > 1 { throw HTTPParseError.invalidHost }
        var chunked = false
        if sawTransferEncoding {
            // RFC 9112 §6.1: Transfer-Encoding overrides Content-Length; a request with both is a
            // smuggling attempt or a broken client, so it is rejected and the connection closed.
            if contentLength != nil { throw HTTPParseError.contentLengthWithTransferEncoding }
            // RFC 9112 §6.1: HTTP/1.0 messages with Transfer-Encoding have faulty framing.
            if parsedVersion == .http10 { throw HTTPParseError.invalidTransferEncoding }
            // RFC 9112 §6.1: a coding we do not understand → 501.
            for coding in transferCodings where !coding.isEmpty {
                let bare = coding.split(separator: ";").first.map { String($0).trimmingSpaces() } ?? ""
                if !bare.caseInsensitiveEquals("chunked") { throw HTTPParseError.unsupportedTransferCoding }
            }
            // RFC 9112 §6.3 item 4: chunked must be the final coding, applied once.
            guard transferCodings.count == 1, transferCodings[0].caseInsensitiveEquals("chunked") else {
                throw HTTPParseError.invalidTransferEncoding
            }
            chunked = true
        }
        // RFC 9112 §9.3: 1.1 persists unless "close"; 1.0 only with "keep-alive".
        let keepAlive = !connectionClose && (parsedVersion == .http11 || connectionKeepAlive)
        head.contentLength = chunked ? nil : contentLength
        head.chunked = chunked
        head.keepAlive = keepAlive
        head.expectContinue = expectContinue
        scanned = 0
        requestLineEnd = -1
        lineEnds.removeAll(keepingCapacity: true)
        bodyReceived = 0
        if chunked {
            state = .chunkSize
        } else if let n = contentLength, n > 0 {
            state = .fixedBody(remaining: n)
        } else {
            state = .endPending
        }
    }
}
