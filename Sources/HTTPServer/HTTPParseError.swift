/// Why a request could not be parsed (RFC 9112). Each case maps to the status the client gets;
/// after any of them the connection is closed, because framing can no longer be trusted.
public enum HTTPParseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The request line is longer than `HTTPLimits.requestLineBytes` → 414.
    case requestLineTooLong
    /// The header section is larger than `HTTPLimits.headerBytes` → 431.
    case headerSectionTooLarge
    /// More header fields than `HTTPLimits.headerCount` → 431.
    case tooManyHeaderFields
    /// The request line is not `method SP request-target SP HTTP-version` (RFC 9112 §3) → 400.
    case invalidRequestLine
    /// The method is not a token (RFC 9110 §9.1) → 400.
    case invalidMethod
    /// The request-target has forbidden characters or no known form (RFC 9112 §3.2) → 400.
    case invalidTarget
    /// A well-formed version other than HTTP/1.0 or HTTP/1.1 (RFC 9112 §2.3) → 505.
    case unsupportedVersion
    /// A field name that is not a token, or whitespace before the colon (RFC 9112 §5.1) → 400.
    case invalidHeaderName
    /// A field value with control characters or a bare CR (RFC 9110 §5.5) → 400.
    case invalidHeaderValue
    /// A line folded with leading whitespace, obsolete since RFC 7230 (RFC 9112 §5.2) → 400.
    case obsoleteLineFolding
    /// A line ending in LF without CR; this server takes the strict reading of RFC 9112 §2.2 → 400.
    case bareLineFeed
    /// An HTTP/1.1 request with no Host, or with several (RFC 9112 §3.2) → 400.
    case invalidHost
    /// Both Content-Length and Transfer-Encoding: a request smuggling vector (RFC 9112 §6.3) → 400.
    case contentLengthWithTransferEncoding
    /// A Content-Length that is not digits, too large, or several that disagree (RFC 9112 §6.3) → 400.
    case invalidContentLength
    /// A transfer coding other than chunked (RFC 9112 §6.1) → 501.
    case unsupportedTransferCoding
    /// Transfer-Encoding whose final coding is not chunked, repeats chunked, or comes with HTTP/1.0
    /// (RFC 9112 §6.1, §6.3) → 400.
    case invalidTransferEncoding
    /// A chunk-size line that is not hex digits with optional extensions, or too long (RFC 9112 §7.1) → 400.
    case invalidChunkSize
    /// Chunk data not followed by CRLF (RFC 9112 §7.1) → 400.
    case invalidChunkTerminator
    /// The body is larger than the route allows → 413.
    case bodyTooLarge
    /// An Expect value other than 100-continue (RFC 9110 §10.1.1) → 417.
    case unsupportedExpectation

    /// The status the client is answered with.
    public var status: HTTPStatus {
        switch self {
        case .requestLineTooLong: return .uriTooLong
        case .headerSectionTooLarge, .tooManyHeaderFields: return .requestHeaderFieldsTooLarge
        case .unsupportedVersion: return .httpVersionNotSupported
        case .unsupportedTransferCoding: return .notImplemented
        case .bodyTooLarge: return .contentTooLarge
        case .unsupportedExpectation: return .expectationFailed
        default: return .badRequest
        }
    }

    public var description: String {
        switch self {
        case .requestLineTooLong: return "request line too long"
        case .headerSectionTooLarge: return "header section too large"
        case .tooManyHeaderFields: return "too many header fields"
        case .invalidRequestLine: return "malformed request line"
        case .invalidMethod: return "invalid method"
        case .invalidTarget: return "invalid request target"
        case .unsupportedVersion: return "HTTP version not supported"
        case .invalidHeaderName: return "invalid header field name"
        case .invalidHeaderValue: return "invalid header field value"
        case .obsoleteLineFolding: return "obsolete line folding"
        case .bareLineFeed: return "line not terminated by CRLF"
        case .invalidHost: return "missing or repeated Host"
        case .contentLengthWithTransferEncoding: return "Content-Length with Transfer-Encoding"
        case .invalidContentLength: return "invalid Content-Length"
        case .unsupportedTransferCoding: return "transfer coding not implemented"
        case .invalidTransferEncoding: return "invalid Transfer-Encoding"
        case .invalidChunkSize: return "invalid chunk size"
        case .invalidChunkTerminator: return "chunk data not followed by CRLF"
        case .bodyTooLarge: return "request body too large"
        case .unsupportedExpectation: return "unsupported expectation"
        }
    }
}
