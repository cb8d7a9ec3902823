import Foundation
import Synchronization

@testable import HTTPServer

/// One request through a galleryd's routes without a socket, done as `HTTPConnection` does it once
/// the head is parsed: the match, the route's admission, the body limit (413), the body read into
/// memory or a temporary file past `inMemoryBodyThreshold` through the route's observer, the inline
/// answer or the handler, the URL space's error responder for what throws and for 404, 405 and
/// `OPTIONS`, and gzip when asked. The answer is then read as a client sees it: the framing fields
/// the server owns (`Content-Length`, `Date`, `Server`, `X-Request-Id`), the default headers, and no body
/// for `HEAD`, 204 and 304; the observer (the application's metrics) is told of the exchange. What
/// only the wire does (keep-alive, pipelining, 100-continue, chunked bodies, timeouts, WebSocket
/// upgrades) is not done here: suites testing it listen.
final class InProcessExchange: Sendable {
    /// Every route of the application.
    let router: HTTPRouter
    /// The server settings the connection would run with: limits, spool directory, default headers.
    let settings: HTTPServerConfiguration
    /// Told of each finished exchange, as the server tells it (the application's metrics).
    let observer: HTTPServerObserver?
    private let requestIDs = Mutex(
        HTTPRequestIDGenerator(serverPrefix: HTTPRequestIDGenerator.randomServerPrefix(), loopIndex: 0))

    init(router: HTTPRouter, settings: HTTPServerConfiguration, observer: HTTPServerObserver? = nil) {
        self.router = router
        self.settings = settings
        self.observer = observer
    }

    /// Answers `method target` with `headers` and `body` (nil: none), as a client reads the answer.
    func respond(
        method: String, target: String, headers: HTTPHeaders, body: Data?
    ) throws -> TestServer.Response {
        let start = monotonicNanoseconds()
        let id = requestIDs.withLock { $0.next() }
        var headers = headers
        // A body's length, as URLSession (and any client not sending chunks) declares it.
        if let body, !headers.contains("Content-Length") { headers["Content-Length"] = String(body.count) }
        var request = HTTPRequest(
            method: HTTPMethod(rawValue: method), target: target, headers: headers, remoteAddress: "127.0.0.1",
            requestID: id)
        // As the server's parsed request: `unmatched` until a route matches.
        request.routePattern = "unmatched"
        // The parser's limit on the request line (RFC 9112 §3: method SP target SP version) → 414.
        let lineTooLong = method.utf8.count + target.utf8.count + 10 > settings.limits.requestLineBytes
        guard !lineTooLong, let (path, query) = HTTPRequest.splitTarget(target) else {
            let responder = router.errorResponder(for: String(target.prefix { $0 != "?" && $0 != "#" }))
            let error = lineTooLong ? HTTPParseError.requestLineTooLong : HTTPParseError.invalidTarget
            return try read(
                responder.response(status: error.status, message: error.description, request: request), for: request,
                since: start)
        }
        request.path = path
        request.query = query
        var response = exchange(&request, body: body.map { [UInt8]($0) } ?? [])
        if case .file(let spooled, _) = request.body { unlink(spooled) }
        HTTPResponseEncoder.applyContentCoding(&response, requestHeaders: request.headers)
        return try read(response, for: request, since: start)
    }

    /// The server's answer to `request`, its body still to be read.
    private func exchange(_ request: inout HTTPRequest, body: [UInt8]) -> HTTPResponse {
        let responder = router.errorResponder(for: request.path)
        switch router.match(method: request.method, path: request.path) {
        case .route(let route, let parameters):
            request.pathParameters = parameters
            request.routePattern = route.pattern
            var admitted: HTTPBodyObserver?
            do {
                admitted = try route.admission?(request)
            } catch {
                return responder.response(for: error, request: request)
            }
            if body.count > admitted?.maxBodyBytes ?? route.maxBodyBytes ?? settings.limits.maxBodyBytes {
                return responder.response(status: .contentTooLarge, message: "request body too large", request: request)
            }
            if !body.isEmpty {
                let observer = admitted ?? route.bodyObserverFactory?()
                request.bodyObserver = observer
                do {
                    let sink = try RequestBodySink(
                        expectedLength: body.count, threshold: settings.limits.inMemoryBodyThreshold,
                        directory: settings.temporaryDirectory, observer: observer)
                    for start in stride(from: 0, to: body.count, by: 64 * 1024) {
                        try body[start..<min(body.count, start + 64 * 1024)].withUnsafeBytes { try sink.append($0) }
                    }
                    request.body = try sink.finish()
                } catch {
                    return responder.response(for: error, request: request)
                }
            }
            if route.mayBlock, let inline = route.inlineAnswer, let answer = inline(request) { return answer }
            do {
                return try route.handler.handle(request)
            } catch {
                return responder.response(for: error, request: request)
            }
        case .methodNotAllowed(let allow):
            var response = responder.response(
                status: .methodNotAllowed, message: "method not allowed", request: request)
            response.headers["Allow"] = allow
            return response
        case .options(let allow):
            var response = HTTPResponse(status: .noContent)
            response.headers["Allow"] = allow
            return response
        case .notFound:
            return responder.response(status: .notFound, message: "not found", request: request)
        }
    }

    /// `response` as the client reads it: the head the connection's `HTTPResponseEncoder` writes
    /// (the framing fields, `Date`, `Server`, the default headers, `X-Request-Id`; a handler's
    /// `Connection: close` as the connection keeps it), read back field by field as a client does,
    /// and the body; the exchange is then told to the observer.
    private func read(_ response: HTTPResponse, for request: HTTPRequest, since start: UInt64) throws
        -> TestServer.Response
    {
        var encoder = HTTPResponseEncoder(defaultHeaders: settings.defaultHeaders)
        var head: [UInt8] = []
        encoder.encodeHead(
            response, into: &head, requestID: request.requestID,
            keepAlive: !response.headers.containsToken("close", in: "Connection"), clientVersion: request.version)
        var headers: [String: String] = [:]
        // The status line, then `name: value` lines up to the empty one (RFC 9112 §2.1, §5).
        for line in String(decoding: head, as: UTF8.self).components(separatedBy: "\r\n").dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = String(line[..<colon])
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            headers[name] = headers[name].map { $0 + ", " + value } ?? value
        }
        let sent = request.method != .head && !HTTPResponseEncoder.hasNoContent(response.status.code)
        let body = try Self.bytes(of: response.body, sent: sent)
        observer?.requestFinished(
            method: request.method, routePattern: request.routePattern, status: response.status.code,
            durationSeconds: Double(monotonicNanoseconds() - start) / 1e9, bytesSent: head.count + body.count)
        return TestServer.Response(status: response.status.code, headers: headers, body: body)
    }

    /// The bytes of a response body (none when it is not sent); a stream is read to its end.
    static func bytes(of body: HTTPResponseBody, sent: Bool) throws -> Data {
        switch body {
        case .empty:
            return Data()
        case .bytes(let bytes):
            return sent ? Data(bytes) : Data()
        case .stream(let stream, _):
            defer { stream.cancel() }
            guard sent else { return Data() }
            let ready = DispatchSemaphore(value: 0)
            stream.setWaker { ready.signal() }
            var data = Data()
            while true {
                switch stream.read() {
                case .bytes(let chunk): data.append(contentsOf: chunk)
                case .pending: ready.wait()
                case .end: return data
                case .failed(let message): throw TestSetupError(description: "response stream failed: \(message)")
                }
            }
        case .file(let path, let offset, let length):
            guard sent else { return Data() }
            return (FileManager.default.contents(atPath: path) ?? Data()).dropFirst(offset).prefix(length)
        case .descriptor(let descriptor, let offset, let length):
            let fd = descriptor.take()
            defer { if !descriptor.isShared { close(fd) } }
            guard sent else { return Data() }
            var bytes = [UInt8](repeating: 0, count: length)
            let read = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, length, off_t(offset)) }
            return Data(bytes.prefix(max(0, read)))
        }
    }
}
