import Foundation
import Postgres
import Testing

@testable import GalleryApp

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `galleryd users …` as an operator runs it (the built binary against a real database), and the
/// password kept out of every log line of a running `galleryd serve`.
@Suite(.serialized) struct UsersCommandTests {
    struct Run {
        let status: Int32
        let output: String
        let error: String
    }

    static func galleryd(_ arguments: [String], databaseURL: String, stdin: String? = nil) throws -> Run {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try galleryBinary())
        process.arguments = arguments
        process.environment = ["DATABASE_URL": databaseURL, "GALLERYD_LOG_LEVEL": "warning"]
        let output = Pipe()
        let error = Pipe()
        let input = Pipe()
        process.standardOutput = output
        process.standardError = error
        process.standardInput = input
        try process.run()
        if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
        try input.fileHandleForWriting.close()
        let out = output.fileHandleForReading.readDataToEndOfFile()
        let err = error.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Run(
            status: process.terminationStatus, output: String(decoding: out, as: UTF8.self),
            error: String(decoding: err, as: UTF8.self))
    }

    @Test func usersCommands_CreateListResetDelete_WithClearErrors() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let url = server.application.configuration.databaseURL
        let created = try Self.galleryd(
            ["users", "create", "olga", "--email", "olga@example.org", "--admin", "--password-stdin"],
            databaseURL: url, stdin: "stdin password\n")
        #expect(created.status == 0, "\(created.error)")
        #expect(created.output.contains("users: created olga"))
        #expect(!created.output.contains("stdin password"))
        let login = try AccountTests.logIn(server, "olga", "stdin password")
        #expect(login.status == 200)
        let token = try #require(login.json["sessionToken"] as? String)

        // A password from a file (its first line), and one generated and printed once.
        let file = NSTemporaryDirectory() + "galleryd-pw-" + UUID().uuidString
        try "file password\nignored\n".write(toFile: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: file) }
        #expect(try Self.galleryd(["users", "create", "pia", "--password-file", file], databaseURL: url).status == 0)
        #expect(try AccountTests.logIn(server, "pia", "file password").status == 200)
        let generated = try Self.galleryd(["users", "create", "quinn"], databaseURL: url)
        #expect(generated.status == 0)
        let password = try #require(
            generated.output.split(separator: "\n").first { $0.hasPrefix("password: ") }?.dropFirst(10))
        #expect(password.count == 20)
        #expect(try AccountTests.logIn(server, "quinn", String(password)).status == 200)

        let list = try Self.galleryd(["users", "list"], databaseURL: url)
        #expect(list.status == 0)
        #expect(list.output.contains("olga  olga@example.org  admin"))
        #expect(list.output.contains("pia  -  -"))
        #expect(list.output.contains("users: 3 account(s)"))
        let connection = try PostgresConnection(url: url)
        #expect(try connection.query("select is_admin from users where username = 'olga'").first!.decode(Bool.self, 0))

        // Failures: a clear line on stderr and exit code 1 (2 for usage).
        let taken = try Self.galleryd(["users", "create", "olga", "--password-stdin"], databaseURL: url, stdin: "x")
        #expect(taken.status == 1)
        #expect(taken.error.contains("Account already exists for this username."))
        let empty = try Self.galleryd(["users", "create", "rita", "--password-stdin"], databaseURL: url, stdin: "\n")
        #expect(empty.status == 1 && empty.error.contains("password is required"))
        let missingFile = try Self.galleryd(
            ["users", "create", "rita", "--password-file", "/nonexistent/pw"], databaseURL: url)
        #expect(missingFile.status == 1 && missingFile.error.contains("cannot read --password-file"))
        let both = try Self.galleryd(
            ["users", "create", "rita", "--password-file", file, "--password-stdin"], databaseURL: url)
        #expect(both.status != 0 && both.error.contains("not both"))
        #expect(
            try Self.galleryd(["users", "reset-password", "nobody"], databaseURL: url).error.contains(
                "no user named nobody"))
        let noDatabase = try Self.galleryd(["users", "list"], databaseURL: "")
        #expect(noDatabase.status == 2 && noDatabase.error.contains("database_url"))

        // reset-password: the new one works, the old one and the old session do not.
        let reset = try Self.galleryd(
            ["users", "reset-password", "olga", "--password-stdin"], databaseURL: url, stdin: "new one")
        #expect(reset.status == 0, "\(reset.error)")
        #expect(try AccountTests.logIn(server, "olga", "stdin password").status == 404)
        #expect(try AccountTests.logIn(server, "olga", "new one").status == 200)
        #expect(try AccountTests.me(server, token).json["code"] as? Int == 209)

        let deleted = try Self.galleryd(["users", "delete", "pia"], databaseURL: url)
        #expect(deleted.status == 0 && deleted.output.contains("users: deleted pia"))
        #expect(try AccountTests.logIn(server, "pia", "file password").status == 404)
        let again = try Self.galleryd(["users", "delete", "pia"], databaseURL: url)
        #expect(again.status == 1 && again.error.contains("no user named pia"))
    }

    @Test func password_IsNeverLogged_ByTheAccessLogOrTheServerLog() throws {
        let lock = try TestServer.lockClusterShared()
        defer { close(lock) }
        let database = try TestServer.makeDatabase(prefix: "galleryd_users_log")
        defer { TestServer.dropDatabase(database.name, admin: database.admin) }
        let storage = NSTemporaryDirectory() + "users-log-blobs-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: storage) }
        let logPath = NSTemporaryDirectory() + "users-log-" + UUID().uuidString + ".log"
        #expect(FileManager.default.createFile(atPath: logPath, contents: nil))
        defer { try? FileManager.default.removeItem(atPath: logPath) }

        let process = Process()
        process.executableURL = URL(fileURLWithPath: try galleryBinary())
        process.arguments = ["serve", "--host", "127.0.0.1", "--port", "0", "--workers", "0"]
        process.environment = [
            "DATABASE_URL": database.url, "GALLERYD_STORAGE_DIR": storage, "GALLERYD_MASTER_KEY": TestServer.masterKey,
            "GALLERYD_URL_SIGNING_KEY": TestServer.urlSigningKey,
            "GALLERYD_LOG_LEVEL": "trace", "GALLERYD_ACCESS_LOG": "text", "GALLERYD_SIGNUP_OPEN": "true",
        ]
        let log = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
        process.standardOutput = log
        process.standardError = log
        try process.run()
        defer { if process.isRunning { process.terminate() } }

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
        let base =
            "http://127.0.0.1:\(try #require(port, "no listening line in \((try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "")"))"
        func send(_ method: String, _ path: String, _ body: String? = nil, token: String? = nil) throws
            -> TestServer.Response
        {
            var request = URLRequest(url: URL(string: base + path)!)
            request.httpMethod = method
            request.setValue(TestServer.appID, forHTTPHeaderField: "X-Parse-Application-Id")
            if let token { request.setValue(token, forHTTPHeaderField: "X-Parse-Session-Token") }
            if let body {
                request.httpBody = Data(body.utf8)
                request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            }
            return try TestServer.send(request)
        }
        let secret = "Hunter2-Sekrit-Passphrase"
        #expect(try send("POST", "/parse/users", "{\"username\":\"sam\",\"password\":\"\(secret)\"}").status == 201)
        #expect(try send("POST", "/parse/users", "{\"username\":\"sam\",\"password\":\"\(secret)\"}").status == 400)
        #expect(try send("GET", "/parse/login?username=sam&password=\(secret)").status == 200)
        #expect(try send("GET", "/parse/login?username=sam&password=\(secret)x").status == 404)
        #expect(try send("GET", "/parse/login?username=nobody&password=\(secret)").status == 404)
        #expect(try send("GET", "/parse/login?username=sam&password=\(secret)&bogus=1").status == 400)
        let login = try send("POST", "/parse/login", "{\"username\":\"sam\",\"password\":\"\(secret)\"}")
        let token = try #require(login.json["sessionToken"] as? String)
        let id = try #require(login.json["objectId"] as? String)
        #expect(try send("PUT", "/parse/users/\(id)", "{\"password\":\"\(secret)-2\"}", token: token).status == 200)
        #expect(
            try send("PUT", "/parse/users/\(id)", "{\"password\":\"\(secret)\",\"bogus\":1}", token: token).status
                == 400)
        #expect(try send("POST", "/parse/login", "{\"username\":\"sam\",\"password\":\"\(secret)").status == 400)

        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        try log.close()
        let text = try String(contentsOfFile: logPath, encoding: .utf8)
        #expect(text.contains("/parse/login"), "the access log was on: \(text.suffix(2000))")
        #expect(!text.contains(secret), "a password reached the log")
        #expect(!text.contains(token), "a session token reached the log")
    }
}
