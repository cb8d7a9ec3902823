import HTTPServer

/// An error responder that adds the CORS headers to another's answers, so a browser script can
/// read the error (a 403, a 404 from the router, a 413) instead of a bare network failure.
struct CORSErrorResponder: HTTPErrorResponder {
    let inner: HTTPErrorResponder
    let cors: CORSPolicy

    func response(for error: Error, request: HTTPRequest) -> HTTPResponse {
        var response = inner.response(for: error, request: request)
        cors.decorate(&response, for: request)
        return response
    }

    func response(status: HTTPStatus, message: String, request: HTTPRequest) -> HTTPResponse {
        var response = inner.response(status: status, message: message, request: request)
        cors.decorate(&response, for: request)
        return response
    }
}
