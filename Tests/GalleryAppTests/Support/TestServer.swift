import Foundation
import Logging
import Postgres
import Testing

@testable import GalleryApp
@testable import HTTPServer

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A galleryd built as `galleryd serve` builds it, on its own fresh database (a copy of the
/// process's `MigratedTemplate`, dropped at stop) and its own blob directory, with its workers,
/// change sequences and LiveQuery feed running. With `listening: false` its routes are called in
/// process (`InProcessExchange`: router, middleware, admission, handler, error responder, no
/// socket), the default; `listening: true` starts the real server on 127.0.0.1 with a random port,
/// for what only the wire shows (raw requests, keep-alive, streaming, WebSockets, other processes
/// calling it) (docs/decisions/035).
/// Tests fail loudly without `DATABASE_URL`: run them with `make test`, which starts a throwaway
/// PostgreSQL.
final class TestServer: Sendable {
    let application: GalleryApplication
    let databaseName: String
    let adminURL: String
    let storage: String
    /// How requests reach the routes when the server does not listen; nil when it does.
    private let inProcess: InProcessExchange?
    private let clusterLock: Int32
    static let masterKey = TestKeys.masterKey
    /// The `url_signing_key` of every test server (and `galleryd` process a test starts).
    static let urlSigningKey = TestKeys.urlSigningKey
    static let appID = TestKeys.appID

    var baseURL: String { "http://127.0.0.1:\(application.port)" }

    /// The database URL every test derives its own database from.
    static func databaseURL() throws -> String {
        try TestEnvironment.databaseURL()
    }

    /// `url` with its database name replaced.
    static func url(_ url: String, database: String) -> String {
        ScratchDatabase.url(url, database: database)
    }

    /// Creates a fresh database and returns its URL.
    static func makeDatabase(prefix: String = "galleryd_test") throws -> (name: String, url: String, admin: String) {
        let database = try ScratchDatabase(prefix: prefix)
        return (database.name, database.url, database.admin)
    }

    static func dropDatabase(_ name: String, admin: String) {
        ScratchDatabase.drop(name, admin: admin)
    }

    /// Whether every test server listens, whatever its test says: `GALLERYD_TEST_WIRE=1` runs the
    /// whole suite over sockets, as before decision 035, to compare or time the two paths.
    static let everyServerListens = ProcessInfo.processInfo.environment["GALLERYD_TEST_WIRE"] == "1"

    init(
        workers: Int = 1, listening: Bool = false, configure: (inout GalleryConfiguration) -> Void = { _ in }
    ) throws {
        clusterLock = try Self.lockClusterShared()
        let database = try MigratedTemplate.copy()
        databaseName = database.name
        adminURL = database.admin
        storage = NSTemporaryDirectory() + "galleryd-test-blobs-" + UUID().uuidString
        var configuration = GalleryConfiguration()
        configuration.host = "127.0.0.1"
        configuration.port = 0
        configuration.databaseURL = database.url
        configuration.storageDir = storage
        configuration.masterKey = Self.masterKey
        configuration.urlSigningKey = Self.urlSigningKey
        // Most suites test other things and fetch bucket keys by path: a public bucket. The default
        // (private, signed URLs) is what SignedAssetURLTests set back and test.
        configuration.bucketPublic = true
        configuration.workers = workers
        configuration.poolSize = 8
        configuration.jobRetryBaseMs = 10
        configuration.drainTimeoutMs = 2000
        // Hashes of 128 MiB and a third of a second would slow every sign-up and login; the
        // default cost is what PasswordHasherTests set back and test.
        configuration.passwordHashCost = 12
        // Quiet like the logger below; the access log has its own tests (HTTPServerTests.AccessLogTests).
        configuration.accessLog = "off"
        configure(&configuration)
        var logger = Logger(label: "galleryd.test")
        logger.logLevel = .warning
        application = try GalleryApplication(configuration: configuration, logger: logger)
        if listening || Self.everyServerListens {
            inProcess = nil
            try application.start()
        } else {
            inProcess = InProcessExchange(
                router: application.router,
                settings: HTTPServerConfiguration(
                    configuration, listenFileDescriptor: nil, temporaryDirectory: application.store.spoolDirectory),
                observer: application.metrics)
            try application.startWithoutListening()
        }
    }

    /// Stops the server and removes its database and blobs.
    func stop() {
        application.shutdown()
        application.wait()
        Self.dropDatabase(databaseName, admin: adminURL)
        try? FileManager.default.removeItem(atPath: storage)
        close(clusterLock)
    }

    /// Takes the lock every database test shares and the PostgresTests restart test takes
    /// exclusively (`ClusterLock`), so the cluster is never restarted under a running server.
    /// Returns the lock file; `close` it to release the lock (a test server does so in `stop()`).
    static func lockClusterShared() throws -> Int32 {
        try ClusterLock.acquireFileDescriptor()
    }

    /// A response as the tests read it.
    struct Response {
        let status: Int
        let headers: [String: String]
        let body: Data

        /// The body as a JSON object (empty when it is not one).
        var json: [String: Any] { (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:] }
        /// The body as a JSON array (empty when it is not one).
        var jsonArray: [Any] { (try? JSONSerialization.jsonObject(with: body)) as? [Any] ?? [] }
        /// The body as text.
        var text: String { String(decoding: body, as: UTF8.self) }

        func header(_ name: String) -> String? {
            headers.first { $0.key.caseInsensitiveCompare(name) == .orderedSame }?.value
        }
    }

    /// Sends a request and waits for the answer. With the Parse app id (the default) and no other
    /// key or session in `headers`, a request outside the account routes also carries the master
    /// key, so the many suites that test other things than access read and write everything, as an
    /// operator does; a test of what the app id alone may do says `anonymous: true`.
    func request(
        _ method: String, _ path: String, body: Data? = nil, headers: [String: String] = [:], appID: String? = appID,
        anonymous: Bool = false
    ) throws -> Response {
        var request = URLRequest(url: URL(string: baseURL + path)!)
        request.httpMethod = method
        request.httpBody = body
        request.timeoutInterval = 60
        if let appID { request.setValue(appID, forHTTPHeaderField: "X-Parse-Application-Id") }
        if !anonymous, appID == Self.appID, !Self.namesCaller(headers), !Self.isAccountRoute(path) {
            request.setValue(Self.masterKey, forHTTPHeaderField: "X-Parse-Master-Key")
        }
        if body != nil && headers["Content-Type"] == nil {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        guard let inProcess else { return try Self.send(request) }
        // The target as URLSession sends it: `URL` percent-encodes what a URL may not hold, and
        // the fragment stays with the client.
        let url = request.url!
        var target = url.path(percentEncoded: true)
        if target.isEmpty { target = "/" }
        if let query = url.query(percentEncoded: true) { target += "?" + query }
        var fields = HTTPHeaders()
        // The `Host` URLSession sends; then the request's own fields.
        fields["Host"] = "127.0.0.1:\(application.port)"
        for (name, value) in request.allHTTPHeaderFields ?? [:] { fields[name] = value }
        return try inProcess.respond(method: method, target: target, headers: fields, body: body)
    }

    /// Sends a JSON body (as `request`: with the master key unless `anonymous` or `headers` name a caller).
    func json(
        _ method: String, _ path: String, _ object: Any, headers: [String: String] = [:], anonymous: Bool = false
    ) throws -> Response {
        try request(
            method, path, body: try JSONSerialization.data(withJSONObject: object), headers: headers,
            anonymous: anonymous)
    }

    /// Whether `path` is an account route (users, login, logout, sessions): their tests say who
    /// calls, and what the app id alone gets there is what they test.
    static func isAccountRoute(_ path: String) -> Bool {
        ["/parse/users", "/parse/login", "/parse/logout", "/parse/sessions", "/parse/classes/_User"].contains {
            path.hasPrefix($0)
        }
    }

    /// Whether `headers` already say who calls (a session, the master key or a REST key), so
    /// `request` adds no master key.
    static func namesCaller(_ headers: [String: String]) -> Bool {
        let callers = ["x-parse-session-token", "x-parse-master-key", "x-parse-rest-api-key"]
        return headers.keys.contains { callers.contains($0.lowercased()) }
    }

    static func send(_ request: URLRequest) throws -> Response {
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var result: Result<Response, Error>!
        let task = URLSession.shared.dataTask(with: request) { data, response, error in
            if let error {
                result = .failure(error)
            } else if let http = response as? HTTPURLResponse {
                var headers: [String: String] = [:]
                for (key, value) in http.allHeaderFields { headers["\(key)"] = "\(value)" }
                result = .success(Response(status: http.statusCode, headers: headers, body: data ?? Data()))
            } else {
                result = .failure(TestSetupError(description: "no HTTP response"))
            }
            done.signal()
        }
        task.resume()
        done.wait()
        return try result.get()
    }

    /// Uploads JPEG bytes and creates a photo from them; returns the photo's objectId.
    func uploadPhoto(_ jpeg: [UInt8], name: String = "photo.jpg", title: String = "", tags: [String] = []) throws
        -> String
    {
        let file = try request(
            "POST", "/parse/files/\(name)", body: Data(jpeg), headers: ["Content-Type": "image/jpeg"])
        guard file.status == 201, let fileName = file.json["name"] as? String else {
            throw TestSetupError(description: "upload failed: \(file.status) \(file.text)")
        }
        let photo = try json(
            "POST", "/parse/classes/Photo",
            [
                "original": ["__type": "File", "name": fileName], "title": title, "tags": tags,
            ])
        guard photo.status == 201 || photo.status == 200, let id = photo.json["objectId"] as? String else {
            throw TestSetupError(description: "photo create failed: \(photo.status) \(photo.text)")
        }
        return id
    }

    /// Waits until the photo's status is no longer pending/processing; returns the final status.
    func waitForProcessing(_ objectId: String, timeout: TimeInterval = 60) throws -> String {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let r = try request("GET", "/parse/classes/Photo/\(objectId)")
            if let status = r.json["status"] as? String, status == "ready" || status == "failed" { return status }
            Thread.sleep(forTimeInterval: 0.05)
        }
        throw TestSetupError(description: "photo \(objectId) not processed within \(timeout) s")
    }

    /// The ETag `fetch` answers with once it has settled: answers carry no tag until the change
    /// sequences are known, and each of a test's inserts reaches the server on its own, so a tag
    /// seen between two of them is rightly replaced. Two answers in a row with the same tag.
    func settledETag(_ fetch: () throws -> String?) throws -> String {
        var previous: String?
        for _ in 0..<200 {
            let tag = try fetch()
            if let tag, tag == previous { return tag }
            previous = tag
            Thread.sleep(forTimeInterval: 0.05)
        }
        throw TestSetupError(description: "no settled ETag")
    }
}
