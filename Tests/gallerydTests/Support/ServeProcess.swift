import Foundation
import GalleryTestSupport

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `galleryd serve` run as an operator runs it: the built binary on 127.0.0.1 and a port of its
/// choosing (read back from its "galleryd listening" line), its log in a file, its blobs in a
/// temporary directory. It migrates the database on start.
final class ServeProcess {
    /// An answer as the tests read it.
    struct Response {
        let status: Int
        let body: Data

        /// The body as a JSON object (empty when it is not one).
        var json: [String: Any] { (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:] }
    }

    let process = Process()
    /// Where the process writes its log (and access log).
    let logPath: String
    let baseURL: String
    private let log: FileHandle
    private let storage: String

    /// Starts `galleryd serve` on `databaseURL` with `TestKeys` and `environment` added.
    init(databaseURL: String, environment: [String: String] = [:]) throws {
        storage = NSTemporaryDirectory() + "galleryd-serve-blobs-" + UUID().uuidString
        logPath = NSTemporaryDirectory() + "galleryd-serve-" + UUID().uuidString + ".log"
        guard FileManager.default.createFile(atPath: logPath, contents: nil) else {
            throw TestSetupError(description: "cannot create \(logPath)")
        }
        log = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
        process.executableURL = URL(fileURLWithPath: try galleryBinary())
        process.arguments = ["serve", "--host", "127.0.0.1", "--port", "0", "--workers", "0"]
        process.environment = [
            "DATABASE_URL": databaseURL, "GALLERYD_STORAGE_DIR": storage, "GALLERYD_MASTER_KEY": TestKeys.masterKey,
            "GALLERYD_URL_SIGNING_KEY": TestKeys.urlSigningKey, "GALLERYD_LOG_LEVEL": "notice",
        ].merging(environment) { $1 }
        process.standardOutput = log
        process.standardError = log
        try process.run()
        // The port, from the "galleryd listening" line.
        var port: Int?
        let deadline = Date().addingTimeInterval(60)
        while port == nil && Date() < deadline && process.isRunning {
            let text = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
            if let line = text.split(separator: "\n").first(where: { $0.contains("galleryd listening") }),
                let range = line.range(of: "port=") ?? line.range(of: "port: ")
            {
                port = Int(line[range.upperBound...].prefix { $0.isNumber })
            }
            if port == nil { Thread.sleep(forTimeInterval: 0.1) }
        }
        guard let port else {
            if process.isRunning { process.terminate() }
            throw TestSetupError(
                description: "no listening line in \((try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "")")
        }
        baseURL = "http://127.0.0.1:\(port)"
    }

    deinit {
        if process.isRunning { process.terminate() }
        try? FileManager.default.removeItem(atPath: storage)
        try? FileManager.default.removeItem(atPath: logPath)
    }

    /// Sends a request with the app id, and a session token, JSON body and other headers when given.
    func send(
        _ method: String, _ path: String, _ body: String? = nil, token: String? = nil, headers: [String: String] = [:]
    ) throws -> Response {
        var request = URLRequest(url: URL(string: baseURL + path)!)
        request.httpMethod = method
        request.timeoutInterval = 60
        request.setValue(TestKeys.appID, forHTTPHeaderField: "X-Parse-Application-Id")
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        if let token { request.setValue(token, forHTTPHeaderField: "X-Parse-Session-Token") }
        if let body {
            request.httpBody = Data(body.utf8)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var result: Result<Response, Error>!
        URLSession.shared.dataTask(with: request) { data, response, error in
            if let error {
                result = .failure(error)
            } else if let http = response as? HTTPURLResponse {
                result = .success(Response(status: http.statusCode, body: data ?? Data()))
            } else {
                result = .failure(TestSetupError(description: "no HTTP response"))
            }
            done.signal()
        }.resume()
        done.wait()
        return try result.get()
    }

    /// `POST /login`, as the SDKs log in.
    func logIn(_ username: String, _ password: String) throws -> Response {
        let body = try JSONSerialization.data(withJSONObject: ["username": username, "password": password])
        return try send("POST", "/parse/login", String(decoding: body, as: UTF8.self))
    }

    /// Stops the process (SIGTERM) and returns everything it logged.
    func stop() throws -> String {
        if process.isRunning { kill(process.processIdentifier, SIGTERM) }
        process.waitUntilExit()
        try log.close()
        return try String(contentsOfFile: logPath, encoding: .utf8)
    }
}
