/// Turns a request into a response. Handlers may block (database, disk): the server runs
/// them on its bounded handler queue, never on the threads that read and write sockets,
/// unless the route is marked non-blocking.
public protocol HTTPHandler: Sendable {
    /// Answers one request. A thrown error is turned into a response by the route's `HTTPErrorResponder`.
    func handle(_ request: HTTPRequest) throws -> HTTPResponse
}

/// A handler made from a closure.
public struct HTTPClosureHandler: HTTPHandler {
    let body: @Sendable (HTTPRequest) throws -> HTTPResponse

    /// Wraps the closure.
    public init(_ body: @escaping @Sendable (HTTPRequest) throws -> HTTPResponse) { self.body = body }

    public func handle(_ request: HTTPRequest) throws -> HTTPResponse { try body(request) }
}

/// Decides the status and body of errors for a part of the URL space: Parse JSON under `/parse`,
/// S3 XML for the bucket, plain text elsewhere. Used both for errors a handler throws and for
/// errors the server itself raises (404, 405, 413, 400 from the parser when the path is known).
public protocol HTTPErrorResponder: Sendable {
    /// The response for an error a handler threw. Unknown errors become a 500 with a generic body.
    func response(for error: Error, request: HTTPRequest) -> HTTPResponse
    /// The response for a status the server produced itself, with a short human message.
    func response(status: HTTPStatus, message: String, request: HTTPRequest) -> HTTPResponse
}

/// The plain-text error format used where no other responder is mounted.
public struct PlainTextErrorResponder: HTTPErrorResponder {
    /// The plain-text responder.
    public init() {}

    public func response(for error: Error, request: HTTPRequest) -> HTTPResponse {
        if let error = error as? HTTPError {
            var response = HTTPResponse.text(error.message + "\n", status: error.status)
            for field in error.headers { response.headers[field.name] = field.value }
            return response
        }
        return .text("internal server error (request \(request.requestID))\n", status: .internalServerError)
    }

    public func response(status: HTTPStatus, message: String, request: HTTPRequest) -> HTTPResponse {
        .text(message + "\n", status: status)
    }
}

/// An error that carries its HTTP status, for handlers that want a specific 4xx.
public struct HTTPError: Error, Sendable, CustomStringConvertible {
    /// The status to answer with.
    public var status: HTTPStatus
    /// A short message for the client.
    public var message: String
    /// Extra header fields (e.g. `Allow`, `Content-Range`).
    public var headers: HTTPHeaders

    public init(_ status: HTTPStatus, _ message: String, headers: HTTPHeaders = HTTPHeaders()) {
        self.status = status
        self.message = message
        self.headers = headers
    }

    public var description: String { "\(status.code) \(message)" }
}
