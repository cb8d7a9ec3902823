import Foundation
import Postgres
import Testing

@testable import GalleryApp

/// Logins as an attacker sends them: many guesses at once, by username and email mixed; input too
/// long to name any account; and more logins than the server has slots for.
@Suite(.serialized) struct LoginFloodTests {
    static let master = ["X-Parse-Master-Key": TestServer.masterKey]

    /// A login body sent over its own connection (raw socket, so none waits for a client's pool).
    static func rawLogin(_ server: TestServer, _ body: [String: Any]) throws -> RawHTTP.Response {
        let bytes = try JSONSerialization.data(withJSONObject: body)
        let head =
            "POST /parse/login HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Parse-Application-Id: \(TestServer.appID)\r\n"
            + "Content-Type: application/json\r\nContent-Length: \(bytes.count)\r\nConnection: close\r\n\r\n"
        return try RawHTTP.exchange(port: server.application.port, head: head, body: [UInt8](bytes))
    }

    /// Sends every body at once, each on its own thread after up to `jitterMs` of random delay;
    /// returns the statuses.
    static func parallelLogins(_ server: TestServer, _ bodies: [[String: Any]], jitterMs: Int) -> [Int] {
        let statuses = Locked([Int](repeating: 0, count: bodies.count))
        let group = DispatchGroup()
        for (index, body) in bodies.enumerated() {
            group.enter()
            // Unchecked: JSON values, read by this one thread only.
            nonisolated(unsafe) let loginBody = body
            let thread = Thread {
                Thread.sleep(forTimeInterval: Double(Int.random(in: 0...jitterMs)) / 1000)
                let status = (try? rawLogin(server, loginBody))?.status ?? -1
                statuses.withValue { $0[index] = status }
                group.leave()
            }
            thread.start()
        }
        group.wait()
        return statuses.current
    }

    static func hashes(_ server: TestServer) throws -> Int {
        let text = try server.request("GET", "/metrics", headers: master).text
        let line = try #require(text.split(separator: "\n").first { $0.hasPrefix("galleryd_password_hashes_total ") })
        return Int(Double(line.split(separator: " ")[1])!)
    }

    @Test func parallelGuesses_ByUsernameAndEmail_PassNoMoreThanTheFreeFailuresPlusOne() throws {
        let server = try TestServer(workers: 0, listening: true) {
            $0.signupOpen = true
            $0.loginFreeFailures = 5
            $0.loginFreeFailuresPerAddress = 0
            // Slots for every guess: what is measured is the throttle, not the 503 of a full queue.
            $0.handlerThreads = 64
        }
        defer { server.stop() }
        _ = try AccountTests.signUp(server, "victim", "the right one", email: "victim@example.org")
        let bodies: [[String: Any]] = (0..<30).map { index in
            index % 2 == 0
                ? ["username": "victim", "password": "guess \(index)"]
                : ["email": index % 4 == 1 ? "victim@example.org" : "VICTIM@example.org", "password": "guess \(index)"]
        }
        for round in 0..<3 {
            try server.application.pool.query("delete from login_failures")
            let statuses = Self.parallelLogins(server, bodies, jitterMs: 150)
            let passed = statuses.filter { $0 != 429 }
            // Five free failures, and the sixth that blocks: never more, however the guesses interleave.
            #expect(passed.count <= 6, "round \(round): \(statuses)")
            #expect(passed.allSatisfy { $0 == 404 }, "round \(round): \(statuses)")
        }
    }

    @Test func usernameAndEmailLogins_ShareOneThrottleKey() throws {
        let server = try AccountTests.openServer {
            $0.loginFreeFailures = 2
            $0.loginFreeFailuresPerAddress = 0
        }
        defer { server.stop() }
        let (id, _) = try AccountTests.signUp(server, "judy", "right", email: "judy@example.org")
        #expect(try AccountTests.logIn(server, "judy", "wrong").status == 404)
        #expect(
            try server.json("POST", "/parse/login", ["email": "Judy@Example.org", "password": "wrong"]).status == 404)
        // The third failure blocks the account, whichever name the next login uses.
        #expect(try AccountTests.logIn(server, "judy", "wrong").status == 404)
        let byEmail = try server.json("POST", "/parse/login", ["email": "judy@example.org", "password": "right"])
        #expect(byEmail.status == 429 && byEmail.header("Retry-After") == "1")
        let connection = try PostgresConnection(url: server.application.configuration.databaseURL)
        #expect(
            try connection.query("select failures from login_failures where key = $1", ["user:" + id]).first?.decode(
                Int.self, 0) == 3)
    }

    @Test func overLongCredentials_AreRefusedWithoutHashing_AndCountedByTheThrottle() throws {
        let server = try TestServer(workers: 0) {
            $0.loginFreeFailures = 100
            $0.loginFreeFailuresPerAddress = 3
        }
        defer { server.stop() }
        let longName = String(repeating: "n", count: AccountService.Limits.usernameCharacters + 1)
        let longPassword = String(repeating: "p", count: AccountService.Limits.passwordBytes + 1)
        let longEmail = String(repeating: "e", count: AccountService.Limits.emailBytes) + "@example.org"
        // Three free failures and the fourth, which blocks the address: each a plain 101.
        for body in [
            ["username": longName, "password": "x"], ["username": "someone", "password": longPassword],
            ["email": longEmail, "password": "x"], ["username": longName, "password": longPassword],
        ] {
            let r = try server.json("POST", "/parse/login", body)
            #expect(r.status == 404 && r.json["code"] as? Int == 101, "\(r.text)")
        }
        let blocked = try server.json("POST", "/parse/login", ["username": longName, "password": "x"])
        #expect(blocked.status == 429 && blocked.json["code"] as? Int == 155 && blocked.header("Retry-After") != nil)
        // Fifty more through one batch: throttled too, and still not one hash.
        let batch = try server.json(
            "POST", "/parse/batch",
            [
                "requests": (0..<50).map { _ in
                    ["method": "POST", "path": "/parse/login", "body": ["username": longName, "password": "x"]]
                }
            ])
        let codes = batch.jsonArray.compactMap { (($0 as? [String: Any])?["error"] as? [String: Any])?["code"] as? Int }
        #expect(codes == [Int](repeating: 155, count: 50), "\(batch.text.prefix(300))")
        #expect(try Self.hashes(server) == 0)
        // Once the address is forgotten, a login of ordinary length hashes (the counter counts).
        try server.application.pool.query("delete from login_failures")
        #expect(try server.json("POST", "/parse/login", ["username": "someone", "password": "x"]).status == 404)
        #expect(try Self.hashes(server) == 1)
    }

    @Test func everyLoginSlotTaken_Is503WithRetryAfter_AtOnce() throws {
        let server = try AccountTests.openServer { $0.handlerThreads = 4 }
        defer { server.stop() }
        let slots = server.application.accounts.slots
        #expect(slots.capacity == 2)
        _ = try AccountTests.signUp(server, "kim", "right")
        // Both slots held (as two slow logins would): the next login, sign-up and password change
        // are refused at once, and the handler thread is free again.
        try slots.run {
            try slots.run {
                let started = Date()
                let login = try AccountTests.logIn(server, "kim", "right")
                #expect(login.status == 503 && login.header("Retry-After") == "1" && login.json["code"] as? Int == 1)
                #expect(Date().timeIntervalSince(started) < 5)
                let signUp = try server.json("POST", "/parse/users", ["username": "lee", "password": "pw"])
                #expect(signUp.status == 503 && signUp.header("Retry-After") == "1")
                // Other requests are served meanwhile.
                #expect(try server.request("GET", "/parse/classes/Photo", headers: Self.master).status == 200)
            }
        }
        #expect(slots.inUse == 0)
        #expect(try AccountTests.logIn(server, "kim", "right").status == 200)
    }

    @Test func loginSlots_AreAtMostHalfTheHandlerThreads() throws {
        #expect(HandlerSlots(configured: 0, handlerThreads: 32).capacity == 16)
        #expect(HandlerSlots(configured: 100, handlerThreads: 32).capacity == 16)
        #expect(HandlerSlots(configured: 4, handlerThreads: 32).capacity == 4)
        #expect(HandlerSlots(configured: 0, handlerThreads: 1).capacity == 1)
        let slots = HandlerSlots(configured: 1, handlerThreads: 8)
        #expect(throws: AccountError.busy(retryAfterSeconds: 1)) { try slots.run { try slots.run {} } }
        #expect(slots.inUse == 0)
    }
}
