import Foundation
import Logging

@testable import GalleryApp
@testable import HTTPServer

/// A galleryd whose routes are called in process, as HummingbirdTesting's `.router` framework
/// does: each request goes through the router, its middleware, the route's admission, inline
/// answer and handler, and the error responder of its URL space, with no socket and no server
/// started. The application is built as `TestServer` builds it, on a database that is never
/// reached: for what is answered before the database (keys, CORS, errors, method overrides).
/// The server's own work on the wire (default headers, gzip, `Content-Length`) is not done here:
/// `TestServer` tests that end to end.
final class InProcessServer {
    let application: GalleryApplication
    private let storage: String

    /// An application with `TestServer`'s settings (then `configure`'s), not started.
    init(configure: (inout GalleryConfiguration) -> Void = { _ in }) throws {
        storage = NSTemporaryDirectory() + "galleryd-in-process-" + UUID().uuidString
        var configuration = GalleryConfiguration()
        // Port 1 of the loopback: nothing listens, so a request that does reach for the database fails fast.
        configuration.databaseURL = "postgresql://galleryd@127.0.0.1:1/galleryd_in_process"
        configuration.storageDir = storage
        configuration.masterKey = TestServer.masterKey
        configuration.urlSigningKey = TestServer.urlSigningKey
        configuration.bucketPublic = true
        configuration.workers = 0
        configuration.accessLog = "off"
        configure(&configuration)
        var logger = Logger(label: "galleryd.test.in-process")
        logger.logLevel = .critical
        application = try GalleryApplication(configuration: configuration, logger: logger)
    }

    /// Releases the application's pool and timers and removes its storage directory.
    func stop() {
        application.shutdown()
        try? FileManager.default.removeItem(atPath: storage)
    }

    /// As `TestServer.request`: the Parse app id by default, and the master key unless `anonymous`,
    /// `headers` name a caller, or the path is an account route.
    func request(
        _ method: String, _ path: String, body: Data? = nil, headers: [String: String] = [:],
        appID: String? = TestServer.appID, anonymous: Bool = false
    ) -> TestServer.Response {
        var fields = HTTPHeaders()
        if let appID { fields["X-Parse-Application-Id"] = appID }
        if !anonymous, appID == TestServer.appID, !TestServer.namesCaller(headers), !TestServer.isAccountRoute(path) {
            fields["X-Parse-Master-Key"] = TestServer.masterKey
        }
        if body != nil && headers["Content-Type"] == nil { fields["Content-Type"] = "application/json" }
        for (name, value) in headers { fields[name] = value }
        let request = HTTPRequest(
            method: HTTPMethod(rawValue: method), target: path, headers: fields,
            body: body.map { .bytes([UInt8]($0)) } ?? .empty, remoteAddress: "127.0.0.1", requestID: "in-process")
        return Self.response(Self.respond(to: request, router: application.router), for: request)
    }

    /// Sends a JSON body (as `request`).
    func json(
        _ method: String, _ path: String, _ object: Any, headers: [String: String] = [:], anonymous: Bool = false
    ) throws -> TestServer.Response {
        request(
            method, path, body: try JSONSerialization.data(withJSONObject: object), headers: headers,
            anonymous: anonymous)
    }

    /// What the connection does with a request once its head is parsed and its body read
    /// (`HTTPConnection`): match, admission, the inline answer, the handler, and the URL space's
    /// error format for what throws and for 404, 405 and `OPTIONS`.
    static func respond(to request: HTTPRequest, router: HTTPRouter) -> HTTPResponse {
        var request = request
        let responder = router.errorResponder(for: request.path)
        switch router.match(method: request.method, path: request.path) {
        case .route(let route, let parameters):
            request.pathParameters = parameters
            request.routePattern = route.pattern
            do {
                let observer = try route.admission?(request) ?? route.bodyObserverFactory?()
                if let observer, case .bytes(let bytes) = request.body {
                    try bytes.withUnsafeBytes { try observer.consume($0) }
                }
                request.bodyObserver = observer
                if let answer = route.inlineAnswer?(request) { return answer }
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

    /// The response as the tests read it; a HEAD answer carries no body.
    static func response(_ response: HTTPResponse, for request: HTTPRequest) -> TestServer.Response {
        var headers: [String: String] = [:]
        for field in response.headers { headers[field.name] = field.value }
        var body = Data()
        if request.method != .head {
            switch response.body {
            case .empty, .stream: break
            case .bytes(let bytes): body = Data(bytes)
            case .file(let path, let offset, let length):
                body = (FileManager.default.contents(atPath: path) ?? Data()).dropFirst(offset).prefix(length)
            case .descriptor(let descriptor, let offset, let length):
                let fd = descriptor.take()
                defer { if !descriptor.isShared { close(fd) } }
                var bytes = [UInt8](repeating: 0, count: length)
                let read = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, length, off_t(offset)) }
                body = Data(bytes.prefix(max(0, read)))
            }
        }
        return TestServer.Response(status: response.status.code, headers: headers, body: body)
    }
}
