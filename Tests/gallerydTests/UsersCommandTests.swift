import Foundation
import GalleryTestSupport
import Postgres
import Testing

/// `galleryd users …` as an operator runs it (the built binary against a real database), and the
/// password kept out of every log line of a running `galleryd serve`.
@Suite(.serialized) struct UsersCommandTests {
    @Test func usersCommands_CreateListResetDelete_WithClearErrors() throws {
        let lock = try ClusterLock.acquireFileDescriptor()
        defer { close(lock) }
        let database = try ScratchDatabase(prefix: "galleryd_users_cmd")
        defer { database.drop() }
        let server = try ServeProcess(databaseURL: database.url)
        defer { _ = try? server.stop() }
        let url = database.url
        let created = try GalleryCommandRun.galleryd(
            ["users", "create", "olga", "--email", "olga@example.org", "--admin", "--password-stdin"],
            databaseURL: url, stdin: "stdin password\n")
        #expect(created.status == 0, "\(created.error)")
        #expect(created.output.contains("users: created olga"))
        #expect(!created.output.contains("stdin password"))
        let login = try server.logIn("olga", "stdin password")
        #expect(login.status == 200)
        let token = try #require(login.json["sessionToken"] as? String)

        // A password from a file (its first line), and one generated and printed once.
        let file = NSTemporaryDirectory() + "galleryd-pw-" + UUID().uuidString
        try "file password\nignored\n".write(toFile: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: file) }
        #expect(
            try GalleryCommandRun.galleryd(["users", "create", "pia", "--password-file", file], databaseURL: url).status
                == 0)
        #expect(try server.logIn("pia", "file password").status == 200)
        let generated = try GalleryCommandRun.galleryd(["users", "create", "quinn"], databaseURL: url)
        #expect(generated.status == 0)
        let password = try #require(
            generated.output.split(separator: "\n").first { $0.hasPrefix("password: ") }?.dropFirst(10))
        #expect(password.count == 20)
        #expect(try server.logIn("quinn", String(password)).status == 200)

        let list = try GalleryCommandRun.galleryd(["users", "list"], databaseURL: url)
        #expect(list.status == 0)
        #expect(list.output.contains("olga  olga@example.org  admin"))
        #expect(list.output.contains("pia  -  -"))
        #expect(list.output.contains("users: 3 account(s)"))
        let connection = try PostgresConnection(url: url)
        #expect(try connection.query("select is_admin from users where username = 'olga'").first!.decode(Bool.self, 0))

        // Failures: a clear line on stderr and exit code 1 (2 for usage).
        let taken = try GalleryCommandRun.galleryd(
            ["users", "create", "olga", "--password-stdin"], databaseURL: url, stdin: "x")
        #expect(taken.status == 1)
        #expect(taken.error.contains("Account already exists for this username."))
        let empty = try GalleryCommandRun.galleryd(
            ["users", "create", "rita", "--password-stdin"], databaseURL: url, stdin: "\n")
        #expect(empty.status == 1 && empty.error.contains("password is required"))
        let missingFile = try GalleryCommandRun.galleryd(
            ["users", "create", "rita", "--password-file", "/nonexistent/pw"], databaseURL: url)
        #expect(missingFile.status == 1 && missingFile.error.contains("cannot read --password-file"))
        let both = try GalleryCommandRun.galleryd(
            ["users", "create", "rita", "--password-file", file, "--password-stdin"], databaseURL: url)
        #expect(both.status != 0 && both.error.contains("not both"))
        #expect(
            try GalleryCommandRun.galleryd(["users", "reset-password", "nobody"], databaseURL: url).error.contains(
                "no user named nobody"))
        let noDatabase = try GalleryCommandRun.galleryd(["users", "list"], databaseURL: "")
        #expect(noDatabase.status == 2 && noDatabase.error.contains("database_url"))

        // reset-password: the new one works, the old one and the old session do not.
        let reset = try GalleryCommandRun.galleryd(
            ["users", "reset-password", "olga", "--password-stdin"], databaseURL: url, stdin: "new one")
        #expect(reset.status == 0, "\(reset.error)")
        #expect(try server.logIn("olga", "stdin password").status == 404)
        #expect(try server.logIn("olga", "new one").status == 200)
        #expect(try server.send("GET", "/parse/users/me", token: token).json["code"] as? Int == 209)

        let deleted = try GalleryCommandRun.galleryd(["users", "delete", "pia"], databaseURL: url)
        #expect(deleted.status == 0 && deleted.output.contains("users: deleted pia"))
        #expect(try server.logIn("pia", "file password").status == 404)
        let again = try GalleryCommandRun.galleryd(["users", "delete", "pia"], databaseURL: url)
        #expect(again.status == 1 && again.error.contains("no user named pia"))
    }

    @Test func password_IsNeverLogged_ByTheAccessLogOrTheServerLog() throws {
        let lock = try ClusterLock.acquireFileDescriptor()
        defer { close(lock) }
        let database = try ScratchDatabase(prefix: "galleryd_users_log")
        defer { database.drop() }
        let server = try ServeProcess(
            databaseURL: database.url,
            environment: ["GALLERYD_LOG_LEVEL": "trace", "GALLERYD_ACCESS_LOG": "text", "GALLERYD_SIGNUP_OPEN": "true"])
        func send(_ method: String, _ path: String, _ body: String? = nil, token: String? = nil) throws
            -> ServeProcess.Response
        {
            try server.send(method, path, body, token: token)
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

        let text = try server.stop()
        #expect(text.contains("/parse/login"), "the access log was on: \(text.suffix(2000))")
        #expect(!text.contains(secret), "a password reached the log")
        #expect(!text.contains(token), "a session token reached the log")
    }
}
