/// The answers the server gives on its own, before any request is known to answer in a URL
/// space's format. Written like every other response, through `HTTPResponseEncoder`.
extension HTTPResponse {
    /// A connection accepted over `maxConnections`: a quick 503 instead of an unbounded number of
    /// open sockets, with `Retry-After: 1`, then the connection is closed.
    static let tooManyConnections = HTTPResponse(
        status: .serviceUnavailable, headers: ["Retry-After": "1"], body: .bytes(Array("too many connections".utf8)))

    /// A request head that did not arrive within `headerRead` (a slowloris client): a 408 with no
    /// body, then the connection is closed. A head that did arrive gets its URL space's 408.
    static let requestHeadTimeout = HTTPResponse(status: .requestTimeout)
}
