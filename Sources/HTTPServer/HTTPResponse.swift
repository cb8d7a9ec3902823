import Foundation

/// A response a handler returns; the server adds `Date`, `Content-Length` or chunking,
/// `Connection`, `X-Request-Id`, and gzip when the client accepts it.
public struct HTTPResponse: Sendable {
    /// The status.
    public var status: HTTPStatus
    /// Header fields set by the handler.
    public var headers: HTTPHeaders
    /// The body.
    public var body: HTTPResponseBody

    /// A response with the given parts.
    public init(status: HTTPStatus = .ok, headers: HTTPHeaders = HTTPHeaders(), body: HTTPResponseBody = .empty) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A response with a byte body and its `Content-Type`.
    public init(status: HTTPStatus = .ok, contentType: String, bytes: [UInt8], headers: HTTPHeaders = HTTPHeaders()) {
        self.status = status
        self.headers = headers
        self.headers["Content-Type"] = contentType
        self.body = .bytes(bytes)
    }

    /// A UTF-8 text response.
    public static func text(_ text: String, status: HTTPStatus = .ok, contentType: String = "text/plain; charset=utf-8")
        -> HTTPResponse
    {
        HTTPResponse(status: status, contentType: contentType, bytes: Array(text.utf8))
    }

    /// A JSON response from already-serialised bytes.
    public static func json(_ bytes: [UInt8], status: HTTPStatus = .ok) -> HTTPResponse {
        HTTPResponse(status: status, contentType: "application/json; charset=utf-8", bytes: bytes)
    }
}

/// What a response carries.
public enum HTTPResponseBody: Sendable {
    /// No body.
    case empty
    /// Bytes in memory, written with writev after the head.
    case bytes([UInt8])
    /// A byte range of a file, written with sendfile(2). `length` bytes from `offset`.
    case file(path: String, offset: Int, length: Int)
    /// A byte range of a file the handler already opened, written with sendfile(2) and closed after.
    case descriptor(HTTPFileDescriptor, offset: Int, length: Int)
    /// `length` bytes that a producer writes into the stream while they are sent (a proxied
    /// object). The connection cancels the stream when it is done with it, sent or not.
    case stream(HTTPBodyStream, length: Int)

    /// The number of body bytes.
    public var count: Int {
        switch self {
        case .empty: return 0
        case .bytes(let b): return b.count
        case .file(_, _, let length): return length
        case .descriptor(_, _, let length): return length
        case .stream(_, let length): return length
        }
    }
}
