import Foundation
import Logging

/// The answers the connection gives itself, without a handler: parse errors, 404, 405, 413, a route's
/// refusal on the head, a failed body, a 408. Each is rendered by the URL space's error responder
/// (Parse JSON under /parse, S3 XML for the bucket) and tells the state machine whether part of the
/// request is still unread.
extension HTTPConnection {
    /// The request could not be parsed: answered, then closed with a lingering read.
    func parseFailed(_ error: HTTPParseError) {
        sink?.discard()
        sink = nil
        machine.requestFailed(unreadBody: true)
        if request == nil {
            let line = parser.requestLine
            var synthetic = HTTPRequest(
                method: HTTPMethod(rawValue: line?.method ?? "GET"), target: "/", remoteAddress: remoteAddress,
                requestID: loop.requestIDs.next())
            synthetic.routePattern = "unmatched"
            requestStart = loop.now
            if let target = line?.target, let split = HTTPRequest.splitTarget(target) {
                synthetic.target = target
                synthetic.path = split.path
                synthetic.query = split.query
                responders.choose(forPath: synthetic.path)
            } else {
                responders.choose(forUndecodable: line?.target)
            }
            request = synthetic
        }
        server.logger.notice(
            "bad request: \(error)",
            metadata: [
                "request": "\(request!.requestID)", "peer": "\(remoteAddress)", "status": "\(error.status.code)",
            ])
        respondServerError(error.status, error.description, hasUnreadBody: true)
    }

    /// The error responder of the current request's URL space, chosen by its path when first needed.
    func currentResponder() -> HTTPErrorResponder { responders.responder(for: request) }

    /// A status the server decided (404, 405, 413, parse errors), rendered by the URL space's responder.
    func respondServerError(
        _ status: HTTPStatus, _ message: String, headers: HTTPHeaders = HTTPHeaders(), hasUnreadBody: Bool
    ) {
        guard let request else { return }
        machine.answeredBeforeBody(unreadBody: hasUnreadBody)
        if !hasUnreadBody { parser.discardEmptyBody() }
        var response = currentResponder().response(status: status, message: message, request: request)
        for field in headers { response.headers[field.name] = field.value }
        HTTPResponseEncoder.applyContentCoding(&response, requestHeaders: request.headers)
        startResponse(response)
    }

    /// An error a route's admission threw on the head, rendered by the responder; a body the client
    /// sends anyway is not stored, but read and discarded by a lingering close after the answer.
    func refuseBeforeBody(_ error: Error, hasUnreadBody: Bool) {
        guard let request else { return close() }
        machine.answeredBeforeBody(unreadBody: hasUnreadBody)
        if !hasUnreadBody { parser.discardEmptyBody() }
        var response = currentResponder().response(for: error, request: request)
        HTTPResponseEncoder.applyContentCoding(&response, requestHeaders: request.headers)
        startResponse(response)
    }

    /// An error thrown while receiving the body (temporary file trouble), rendered by the responder.
    func respondWithError(_ error: Error) {
        guard let request else { return close() }
        server.logger.error("request failed: \(error)", metadata: ["request": "\(request.requestID)"])
        startResponse(currentResponder().response(for: error, request: request))
    }

    /// A best-effort 408 before closing: in the URL space's format when the request head is known
    /// (Parse JSON under /parse), `HTTPResponse.requestHeadTimeout` otherwise. Never waits on the socket.
    func respondTimeout(_ cause: HTTPConnectionStateMachine.TimeoutCause) {
        let what: String
        switch cause {
        case .head: what = "head"
        case .bodyRate: what = "body below the minimum rate"
        case .bodyStall: what = "body stalled"
        }
        server.logger.notice("request timed out (\(what))", metadata: ["peer": "\(remoteAddress)"])
        let message = cause == .bodyRate ? "request body too slow" : "request timed out"
        let bytes: [UInt8]
        if let request {
            var response = currentResponder().response(status: .requestTimeout, message: message, request: request)
            if case .bytes = response.body {} else { response.body = .empty }
            bytes = loop.encoder.encode(
                response, requestID: request.requestID, keepAlive: false, clientVersion: request.version)
        } else {
            bytes = loop.encoder.encode(
                .requestHeadTimeout, requestID: loop.requestIDs.next(), keepAlive: false, clientVersion: .http11)
        }
        _ = bytes.withUnsafeBytes { SystemCalls.send(fd, $0.baseAddress, $0.count, dontWait: true) }
    }
}
