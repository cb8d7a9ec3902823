/// The parser's events with their payloads, and the trailers of an ended message.
extension HTTPRequestParser {
    /// What one step of `next` produced (the tests' and fuzzers' view of the parser).
    enum Event {
        /// A complete, validated request head.
        case head(HTTPRequestHead)
        /// Decoded body bytes: a range of the input passed to `next`.
        case body(Range<Int>)
        /// The end of the message, with the trailer fields of a chunked body (RFC 9112 §7.1.2).
        case end(trailers: HTTPHeaders)
    }

    /// `step` with the head and the trailers in the event (nil when nothing was produced): how the
    /// tests and the fuzzers read the parser. The connection uses `step`.
    mutating func next(_ input: UnsafeRawBufferPointer) throws -> (event: Event?, consumed: Int) {
        let (step, consumed) = try step(input)
        switch step {
        case .nothing: return (nil, consumed)
        case .head: return (.head(head), consumed)
        case .body(let range): return (.body(range), consumed)
        case .end: return (.end(trailers: takeTrailers()), consumed)
        }
    }

    /// The message ended: its trailers are kept for `takeTrailers()`, the rest is reset.
    mutating func endMessage() {
        if trailers.count > 0 { swap(&trailers, &endedTrailers) }
        reset()
    }

    /// The trailer fields of the message that just ended (empty for most), handed over once.
    mutating func takeTrailers() -> HTTPHeaders {
        guard endedTrailers.count > 0 else { return HTTPHeaders() }
        defer { endedTrailers = HTTPHeaders() }
        return endedTrailers
    }
}
