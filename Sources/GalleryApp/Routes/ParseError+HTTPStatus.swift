import HTTPServer

extension ParseError {
    /// The HTTP status for this error (see `httpStatusCode`): the HTTP adapter's view of a Parse
    /// code, kept out of `Parse/`, which knows no HTTP.
    public var httpStatus: HTTPStatus {
        switch httpStatusCode {
        case 404: return .notFound
        case 429: return .tooManyRequests
        case 500: return .internalServerError
        default: return .badRequest
        }
    }
}
