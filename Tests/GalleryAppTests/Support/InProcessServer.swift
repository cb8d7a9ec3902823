import Foundation
import Logging

@testable import GalleryApp
@testable import HTTPServer

/// A galleryd on a database that is never reached, its routes called in process
/// (`InProcessExchange`, as HummingbirdTesting's `.router` framework does): for what is answered
/// before the database (keys, CORS, errors, method overrides, route shapes), with no database
/// made, no migration and no server started. Routes that need data use `TestServer`.
final class InProcessServer {
    let application: GalleryApplication
    private let storage: String
    private let exchange: InProcessExchange

    /// An application with `TestServer`'s settings (then `configure`'s), not started; its log goes
    /// to `logger` (nothing below critical by default).
    init(logger: Logger? = nil, configure: (inout GalleryConfiguration) -> Void = { _ in }) throws {
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
        var quiet = Logger(label: "galleryd.test.in-process")
        quiet.logLevel = .critical
        application = try GalleryApplication(configuration: configuration, logger: logger ?? quiet)
        exchange = InProcessExchange(
            router: application.router,
            settings: HTTPServerConfiguration(
                configuration, listenFileDescriptor: nil, temporaryDirectory: application.store.spoolDirectory),
            observer: application.metrics)
    }

    /// Releases the application's pool and timers and removes its storage directory.
    func stop() {
        application.shutdown()
        try? FileManager.default.removeItem(atPath: storage)
    }

    /// As `TestServer.request`: the Parse app id by default, and the master key unless `anonymous`,
    /// `headers` name a caller, or the path is an account route. A response body that cannot be
    /// read (a failed stream, never on these routes) is answered as status 0.
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
        do {
            return try exchange.respond(method: method, target: path, headers: fields, body: body)
        } catch {
            return TestServer.Response(status: 0, headers: [:], body: Data("\(error)".utf8))
        }
    }

    /// Sends a JSON body (as `request`).
    func json(
        _ method: String, _ path: String, _ object: Any, headers: [String: String] = [:], anonymous: Bool = false
    ) throws -> TestServer.Response {
        request(
            method, path, body: try JSONSerialization.data(withJSONObject: object), headers: headers,
            anonymous: anonymous)
    }
}
