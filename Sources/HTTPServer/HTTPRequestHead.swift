/// The head of a request as parsed, before routing: what the connection needs to frame the body
/// and decide keep-alive.
struct HTTPRequestHead: Sendable {
    /// The method token.
    var method: HTTPMethod
    /// The request-target as received.
    var target: String
    /// HTTP/1.0 or HTTP/1.1.
    var version: HTTPVersion
    /// The header fields in order.
    var headers: HTTPHeaders
    /// The declared body length, or nil when the body is chunked or absent.
    var contentLength: Int?
    /// Whether the body uses the chunked transfer coding.
    var chunked: Bool
    /// Whether the connection may stay open afterwards (RFC 9112 §9.3).
    var keepAlive: Bool
    /// Whether the client waits for `100 Continue` before sending the body (RFC 9110 §10.1.1).
    var expectContinue: Bool

    /// Whether a body follows the head.
    var hasBody: Bool { chunked || (contentLength ?? 0) > 0 }
}
