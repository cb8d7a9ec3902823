import Foundation
import Postgres
import Testing

@testable import GalleryApp

/// Logging in: wrong passwords and unknown users, the throttle per username and per address, and
/// rehashing passwords stored with weaker parameters.
extension AccountTests {
    @Test func logIn_WrongPassword_UnknownUser_AndMissingFields() throws {
        let server = try Self.openServer()
        defer { server.stop() }
        _ = try Self.signUp(server, "frank", "right")
        let wrong = try Self.logIn(server, "frank", "wrong")
        let unknown = try Self.logIn(server, "nobody", "wrong")
        for r in [wrong, unknown] {
            #expect(r.status == 404)
            #expect(r.json["code"] as? Int == 101)
            #expect(r.json["error"] as? String == "Invalid username/password.")
        }
        let missingUser = try server.request("GET", "/parse/login?password=x")
        #expect(missingUser.status == 400 && missingUser.json["code"] as? Int == 200)
        let missingPassword = try server.json("POST", "/parse/login", ["username": "frank"])
        #expect(missingPassword.status == 400 && missingPassword.json["code"] as? Int == 201)
        #expect(
            try server.request("GET", "/parse/login?username=frank&password=right&extra=1").json["code"] as? Int == 102)
        #expect(
            try server.json("POST", "/parse/login", ["username": "frank", "password": 5]).json["code"] as? Int == 111)
        // The JavaScript SDK's form: keys and _method in a text/plain body.
        let sdk = try server.request(
            "POST", "/parse/login",
            body: try JSONSerialization.data(withJSONObject: [
                "username": "frank", "password": "right", "_method": "GET", "_ApplicationId": TestServer.appID,
                "_ClientVersion": "js5.0.0", "_InstallationId": "install-1",
            ]),
            headers: ["Content-Type": "text/plain"], appID: nil)
        #expect(sdk.status == 200)
        let token = try #require(sdk.json["sessionToken"] as? String)
        let session = try server.request("GET", "/parse/sessions/me", headers: ["X-Parse-Session-Token": token])
        #expect(session.json["installationId"] as? String == "install-1")
    }

    @Test func throttle_BacksOffPerUsername_WithGrowingRetryAfter_AndResetsOnSuccess() throws {
        let server = try Self.openServer {
            $0.loginFreeFailures = 2
            $0.loginFreeFailuresPerAddress = 0
        }
        defer { server.stop() }
        let (graceId, _) = try Self.signUp(server, "grace", "right")
        #expect(try Self.logIn(server, "grace", "wrong").status == 404)
        #expect(try Self.logIn(server, "grace", "wrong").status == 404)
        // The third failure is still answered 101, and blocks the username for 1 s.
        #expect(try Self.logIn(server, "grace", "wrong").status == 404)
        let blocked = try Self.logIn(server, "grace", "right")
        #expect(blocked.status == 429)
        #expect(blocked.json["code"] as? Int == 155)
        #expect(blocked.header("Retry-After") == "1")
        // Another username is not affected (the address is not counted here).
        #expect(try Self.logIn(server, "someone-else", "wrong").status == 404)
        // Kept in PostgreSQL, so every instance sees the block.
        let connection = try PostgresConnection(url: server.application.configuration.databaseURL)
        #expect(
            try connection.query(
                "select count(*)::bigint from login_failures where key = $1 and blocked_until is not null",
                ["user:" + graceId]
            )
            .first!.decode(Int.self, 0) == 1)

        Thread.sleep(forTimeInterval: 1.1)
        #expect(try Self.logIn(server, "grace", "wrong").status == 404)
        let longer = try Self.logIn(server, "grace", "wrong")
        #expect(longer.status == 429)
        #expect(longer.header("Retry-After") == "2")

        Thread.sleep(forTimeInterval: 2.1)
        #expect(try Self.logIn(server, "grace", "right").status == 200)
        // The success forgot the failures: the next wrong password is a plain 101 again.
        #expect(try Self.logIn(server, "grace", "wrong").status == 404)
        #expect(try Self.logIn(server, "grace", "right").status == 200)

        let metrics = try server.request("GET", "/metrics", headers: Self.master).text
        #expect(metrics.contains("galleryd_login_attempts_total{outcome=\"throttled\"} 2"))
        #expect(metrics.contains("galleryd_login_attempts_total{outcome=\"success\"} 2"))
        #expect(metrics.contains("galleryd_login_attempts_total{outcome=\"failure\"} 6"))
    }

    @Test func throttle_BacksOffPerAddress_AcrossUsernames() throws {
        let server = try Self.openServer {
            $0.loginFreeFailures = 100
            $0.loginFreeFailuresPerAddress = 2
        }
        defer { server.stop() }
        _ = try Self.signUp(server, "heidi", "right")
        #expect(try Self.logIn(server, "u1", "x").status == 404)
        #expect(try Self.logIn(server, "u2", "x").status == 404)
        #expect(try Self.logIn(server, "u3", "x").status == 404)
        let blocked = try Self.logIn(server, "heidi", "right")
        #expect(blocked.status == 429)
        #expect(blocked.header("Retry-After") == "1")
    }

    @Test func logIn_WithWeakerStoredParameters_Rehashes() throws {
        let server = try Self.openServer()
        defer { server.stop() }
        let (id, _) = try Self.signUp(server, "leo", "pw")
        let weak = try PasswordHasher(parameters: .init(n: 1024, r: 8, p: 1)).hash("pw")
        let connection = try PostgresConnection(url: server.application.configuration.databaseURL)
        try connection.query("update users set password_hash = $1 where object_id = $2", [weak, id])
        #expect(try Self.logIn(server, "leo", "pw").status == 200)
        let stored = try connection.query("select password_hash from users where object_id = $1", [id]).first!.decode(
            String.self, 0)
        #expect(stored.hasPrefix("scrypt$\(1 << server.application.configuration.passwordHashCost)$8$1$"))
        #expect(stored != weak)
        #expect(try Self.logIn(server, "leo", "pw").status == 200)
    }

    @Test func logIn_WithAHashOfTheFormerDefault_RehashesAtScryptTwoToThe17() throws {
        // The default cost, as a fresh install runs it (TestServer lowers it for speed).
        let server = try Self.openServer { $0.passwordHashCost = GalleryConfiguration().passwordHashCost }
        defer { server.stop() }
        #expect(server.application.configuration.passwordHashCost == 17)
        #expect(PasswordHasher.Parameters.standard == .init(n: 1 << 17, r: 8, p: 1))
        let (id, _) = try Self.signUp(server, "mia", "pw-mia")
        let connection = try PostgresConnection(url: server.application.configuration.databaseURL)
        let fresh = try connection.query("select password_hash from users where object_id = $1", [id]).first!.decode(
            String.self, 0)
        #expect(fresh.hasPrefix("scrypt$131072$8$1$"))
        // A hash stored before the move (N = 2^15) is replaced at the next login.
        let former = try PasswordHasher(parameters: .init(n: 1 << 15, r: 8, p: 1)).hash("pw-mia")
        try connection.query("update users set password_hash = $1 where object_id = $2", [former, id])
        #expect(try Self.logIn(server, "mia", "pw-mia").status == 200)
        let stored = try connection.query("select password_hash from users where object_id = $1", [id]).first!.decode(
            String.self, 0)
        #expect(stored.hasPrefix("scrypt$131072$8$1$"))
        #expect(try Self.logIn(server, "mia", "wrong").status != 200)
    }
}
