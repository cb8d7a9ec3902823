import Foundation
import Postgres
import Testing

@testable import GalleryApp

/// Sign-up, login, `users/me`, logout and sessions over HTTP against a real server and PostgreSQL,
/// with Parse's answers for every failure.
@Suite(.serialized) struct AccountTests {
    static let master = ["X-Parse-Master-Key": TestServer.masterKey]

    /// A server with sign-up open (most tests sign up without the master key).
    static func openServer(_ configure: (inout GalleryConfiguration) -> Void = { _ in }) throws -> TestServer {
        try TestServer(workers: 0) {
            $0.signupOpen = true
            configure(&$0)
        }
    }

    static func signUp(_ server: TestServer, _ username: String, _ password: String, email: String? = nil) throws -> (
        id: String, token: String
    ) {
        var body: [String: Any] = ["username": username, "password": password]
        if let email { body["email"] = email }
        let r = try server.json("POST", "/parse/users", body)
        guard r.status == 201, let id = r.json["objectId"] as? String, let token = r.json["sessionToken"] as? String
        else {
            throw TestSetupError(description: "sign-up failed: \(r.status) \(r.text)")
        }
        return (id, token)
    }

    static func logIn(_ server: TestServer, _ username: String, _ password: String) throws -> TestServer.Response {
        try server.json("POST", "/parse/login", ["username": username, "password": password])
    }

    static func me(_ server: TestServer, _ token: String) throws -> TestServer.Response {
        try server.request("GET", "/parse/users/me", headers: ["X-Parse-Session-Token": token])
    }

    @Test func signUp_LogIn_Become_LogOut_TheParseWay() throws {
        let server = try Self.openServer()
        defer { server.stop() }
        let signUp = try server.json(
            "POST", "/parse/users", ["username": "alice", "password": "correct horse", "email": "a@example.org"],
            headers: ["X-Parse-Revocable-Session": "1"])
        #expect(signUp.status == 201)
        let id = try #require(signUp.json["objectId"] as? String)
        let firstToken = try #require(signUp.json["sessionToken"] as? String)
        #expect(firstToken.hasPrefix("r:") && firstToken.count == 66)
        #expect(signUp.json["createdAt"] is String)
        #expect(signUp.header("Location") == "\(server.application.publicURL)/parse/users/\(id)")
        #expect(Set(signUp.json.keys) == ["objectId", "createdAt", "sessionToken"])

        // GET /login with the query string, and POST /login with a JSON body.
        let get = try server.request("GET", "/parse/login?username=alice&password=correct%20horse")
        #expect(get.status == 200)
        #expect(get.json["objectId"] as? String == id)
        #expect(get.json["username"] as? String == "alice")
        #expect(get.json["email"] as? String == "a@example.org")
        let post = try Self.logIn(server, "alice", "correct horse")
        #expect(post.status == 200)
        let token = try #require(post.json["sessionToken"] as? String)
        #expect(token != firstToken && token != get.json["sessionToken"] as? String)
        for r in [signUp, get, post] {
            #expect(!r.text.contains("correct horse") && !r.text.contains("scrypt") && !r.text.contains("password"))
        }
        // Login by email, case-insensitively, as Parse Server allows.
        #expect(
            try server.json("POST", "/parse/login", ["email": "A@Example.org", "password": "correct horse"]).status
                == 200)

        // Become: users/me with the header and with the body's _SessionToken (_method GET).
        let me = try Self.me(server, token)
        #expect(me.status == 200)
        #expect(me.json["objectId"] as? String == id && me.json["sessionToken"] as? String == token)
        let bodyMe = try server.json("POST", "/parse/users/me", ["_method": "GET", "_SessionToken": token])
        #expect(bodyMe.json["objectId"] as? String == id)

        // The session: sessions/me and the caller's own sessions (four: sign-up, three logins).
        let session = try server.request("GET", "/parse/sessions/me", headers: ["X-Parse-Session-Token": token])
        #expect(session.status == 200)
        #expect(session.json["sessionToken"] as? String == token)
        #expect((session.json["user"] as? [String: Any])?["objectId"] as? String == id)
        #expect((session.json["createdWith"] as? [String: Any])?["action"] as? String == "login")
        #expect((session.json["expiresAt"] as? [String: Any])?["__type"] as? String == "Date")
        let list = try server.request("GET", "/parse/sessions", headers: ["X-Parse-Session-Token": token])
        #expect((list.json["results"] as? [Any])?.count == 4)

        // Log out: {} and the token is dead at once (it was cached by users/me a moment ago).
        let logout = try server.request("POST", "/parse/logout", headers: ["X-Parse-Session-Token": token])
        #expect(logout.status == 200 && logout.text == "{}")
        let dead = try Self.me(server, token)
        #expect(dead.status == 400 && dead.json["code"] as? Int == 209)
        #expect(
            try server.request("POST", "/parse/logout", headers: ["X-Parse-Session-Token": token]).json["code"] as? Int
                == 209)
        // Logging out with no session is Parse's {} too.
        #expect(try server.request("POST", "/parse/logout").text == "{}")
        // users/me and sessions/me without a token: 209.
        #expect(try server.request("GET", "/parse/users/me").json["code"] as? Int == 209)
        #expect(try server.request("GET", "/parse/sessions/me").json["code"] as? Int == 209)
        // A garbage token is 209 everywhere, never a 500.
        #expect(try Self.me(server, "r:not a token").json["code"] as? Int == 209)
        #expect(try Self.me(server, String(repeating: "x", count: 300)).json["code"] as? Int == 209)
    }

    @Test func signUp_IsIdempotent_WithTheSameRequestId() throws {
        let server = try Self.openServer()
        defer { server.stop() }
        let headers = ["X-Parse-Request-Id": "retry-1"]
        // One body sent twice: two dictionary literals may serialize their keys in different orders
        // (another body, so no replay).
        let body = try JSONSerialization.data(withJSONObject: ["username": "bob", "password": "pw-1"])
        let first = try server.request("POST", "/parse/users", body: body, headers: headers)
        let again = try server.request("POST", "/parse/users", body: body, headers: headers)
        #expect(first.status == 201 && again.status == 201)
        #expect(first.json["objectId"] as? String == again.json["objectId"] as? String)
        // Without the id the same body is a second sign-up: the username is taken.
        #expect(
            try server.json("POST", "/parse/users", ["username": "bob", "password": "pw-1"]).json["code"] as? Int == 202
        )
    }

    @Test func signUp_IsClosedByDefault_ButTheMasterKeyCreatesUsers() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let refused = try server.json("POST", "/parse/users", ["username": "carol", "password": "pw"])
        #expect(refused.status == 400)
        #expect(refused.json["code"] as? Int == 119)
        let classRoute = try server.json("POST", "/parse/classes/_User", ["username": "carol", "password": "pw"])
        #expect(classRoute.json["code"] as? Int == 119)
        let created = try server.json(
            "POST", "/parse/users", ["username": "carol", "password": "pw"], headers: Self.master)
        #expect(created.status == 201)
        #expect(try Self.logIn(server, "carol", "pw").status == 200)
        // Wrong or missing keys are Parse's 403 before anything else.
        #expect(try server.request("POST", "/parse/users", body: Data("{}".utf8), appID: "wrong").status == 403)
        #expect(try server.request("GET", "/parse/login?username=carol&password=pw", appID: nil).status == 403)
    }

    @Test func signUp_RefusesMissingFields_TakenNames_AndBadInput_WithParseCodes() throws {
        let server = try Self.openServer()
        defer { server.stop() }
        _ = try Self.signUp(server, "dave", "pw", email: "dave@example.org")
        func code(_ body: Any) throws -> (Int, Int?) {
            let r = try server.json("POST", "/parse/users", body)
            return (r.status, r.json["code"] as? Int)
        }
        #expect(try code(["password": "pw"]) == (400, 200))
        #expect(try code(["username": "", "password": "pw"]) == (400, 200))
        #expect(try code(["username": "erin"]) == (400, 201))
        #expect(try code(["username": "erin", "password": ""]) == (400, 201))
        #expect(try code(["username": "dave", "password": "pw"]) == (400, 202))
        #expect(try code(["username": "erin", "password": "pw", "email": "DAVE@example.org"]) == (400, 203))
        #expect(try code(["username": "erin", "password": "pw", "email": "not-an-email"]) == (400, 125))
        #expect(try code(["username": "erin", "password": "pw", "isAdmin": true]) == (400, 105))
        #expect(try code(["username": 12, "password": "pw"]) == (400, 111))
        #expect(try code(["username": "erin\u{1}", "password": "pw"]) == (400, 200))
        #expect(try code(["username": String(repeating: "e", count: 129), "password": "pw"]) == (400, 200))
        #expect(try code(["username": "erin", "password": String(repeating: "p", count: 1025)]) == (400, 142))
        #expect(try code(["just", "an", "array"]) == (400, 107))
        let broken = try server.request("POST", "/parse/users", body: Data("{\"username\":".utf8))
        #expect(broken.status == 400 && broken.json["code"] as? Int == 107)
        // Nothing of the above made an account.
        let connection = try PostgresConnection(url: server.application.configuration.databaseURL)
        #expect(try connection.query("select count(*)::bigint from users").first!.decode(Int.self, 0) == 1)
    }

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

    @Test func expiredSession_Is209() throws {
        let server = try Self.openServer()
        defer { server.stop() }
        let (_, token) = try Self.signUp(server, "ivan", "pw")
        let connection = try PostgresConnection(url: server.application.configuration.databaseURL)
        try connection.query("update sessions set expires_at = now() - interval '1 second'")
        let r = try Self.me(server, token)
        #expect(r.status == 400 && r.json["code"] as? Int == 209)
        #expect(
            try server.request("GET", "/parse/sessions/me", headers: ["X-Parse-Session-Token": token]).json["code"]
                as? Int == 209)
        // The next login removes the user's expired sessions; the new one is the only one listed.
        let fresh = try #require(try Self.logIn(server, "ivan", "pw").json["sessionToken"] as? String)
        let list = try server.request("GET", "/parse/sessions", headers: ["X-Parse-Session-Token": fresh])
        #expect((list.json["results"] as? [Any])?.count == 1)
        #expect(try connection.query("select count(*)::bigint from sessions").first!.decode(Int.self, 0) == 1)
    }

    @Test func sessionLength_SetsTheExpiry() throws {
        let server = try Self.openServer { $0.sessionLengthDays = 2 }
        defer { server.stop() }
        _ = try Self.signUp(server, "ivy", "pw")
        let connection = try PostgresConnection(url: server.application.configuration.databaseURL)
        let hours = try connection.query(
            "select extract(epoch from expires_at - created_at)::bigint / 3600 from sessions"
        )
        .first!.decode(Int.self, 0)
        #expect(hours == 48)
    }

    @Test func revokedSession_Is209_AtOnce_ThroughTheCache() throws {
        let server = try Self.openServer()
        defer { server.stop() }
        let (id, first) = try Self.signUp(server, "judy", "pw")
        let second = try #require(try Self.logIn(server, "judy", "pw").json["sessionToken"] as? String)
        #expect(try Self.me(server, first).status == 200)  // now cached for 5 s
        #expect(try Self.me(server, second).status == 200)
        // DELETE /sessions/<id> of the first session, from the second.
        let sessions = try server.request("GET", "/parse/sessions", headers: ["X-Parse-Session-Token": second])
        let results = try #require(sessions.json["results"] as? [[String: Any]])
        #expect(results.count == 2)
        // Only the caller's current session shows its token.
        #expect(results.filter { $0["sessionToken"] != nil }.map { $0["sessionToken"] as? String } == [second])
        let firstSession = try #require(results.first { $0["sessionToken"] == nil }?["objectId"] as? String)
        let revoke = try server.request(
            "DELETE", "/parse/sessions/\(firstSession)", headers: ["X-Parse-Session-Token": second])
        #expect(revoke.status == 200 && revoke.text == "{}")
        #expect(try Self.me(server, first).json["code"] as? Int == 209)
        #expect(try Self.me(server, second).json["objectId"] as? String == id)

        // Another user cannot revoke or see it; without a session: 206.
        let (_, other) = try Self.signUp(server, "mallory", "pw")
        let mine = try #require(
            try server.request("GET", "/parse/sessions/me", headers: ["X-Parse-Session-Token": second]).json["objectId"]
                as? String)
        let stranger = try server.request(
            "DELETE", "/parse/sessions/\(mine)", headers: ["X-Parse-Session-Token": other])
        #expect(stranger.status == 404 && stranger.json["code"] as? Int == 101)
        #expect(try server.request("DELETE", "/parse/sessions/\(mine)").json["code"] as? Int == 206)
        #expect(try server.request("GET", "/parse/sessions").json["code"] as? Int == 206)
        #expect(try Self.me(server, second).status == 200)
        // The master key sees and revokes any session.
        let all = try server.request("GET", "/parse/sessions", headers: Self.master)
        #expect((all.json["results"] as? [Any])?.count == 2)
        #expect(try server.request("DELETE", "/parse/sessions/\(mine)", headers: Self.master).status == 200)
        #expect(try Self.me(server, second).json["code"] as? Int == 209)
    }

    @Test func passwordChange_RevokesTheOtherSessions_AndKeepsTheCallers() throws {
        let server = try Self.openServer()
        defer { server.stop() }
        let (id, first) = try Self.signUp(server, "ken", "old-password")
        let second = try #require(try Self.logIn(server, "ken", "old-password").json["sessionToken"] as? String)
        #expect(try Self.me(server, first).status == 200)
        #expect(try Self.me(server, second).status == 200)
        let change = try server.json(
            "PUT", "/parse/users/\(id)", ["password": "new-password"], headers: ["X-Parse-Session-Token": first])
        #expect(change.status == 200)
        #expect(change.json["updatedAt"] is String)
        #expect(try Self.me(server, second).json["code"] as? Int == 209)
        #expect(try Self.me(server, first).status == 200)
        #expect(try Self.logIn(server, "ken", "old-password").status == 404)
        #expect(try Self.logIn(server, "ken", "new-password").status == 200)
        // Username and email through the SDKs' POST with _method PUT and _SessionToken.
        let rename = try server.json(
            "POST", "/parse/classes/_User/\(id)",
            [
                "_method": "PUT", "_SessionToken": first, "username": "kenneth", "email": "k@example.org",
            ])
        #expect(rename.status == 200)
        let me = try Self.me(server, first)
        #expect(me.json["username"] as? String == "kenneth" && me.json["email"] as? String == "k@example.org")
        #expect(
            try server.json("PUT", "/parse/users/\(id)", ["email": NSNull()], headers: ["X-Parse-Session-Token": first])
                .status == 200)
        #expect(try Self.me(server, first).json["email"] == nil)
        #expect(
            try server.json("PUT", "/parse/users/\(id)", ["isAdmin": true], headers: ["X-Parse-Session-Token": first])
                .json["code"] as? Int == 105)
        // The master key's password change revokes every session.
        #expect(try server.json("PUT", "/parse/users/\(id)", ["password": "third"], headers: Self.master).status == 200)
        #expect(try Self.me(server, first).json["code"] as? Int == 209)
    }

    @Test func anotherUsersAccount_IsRefused_ForReadChangeAndDelete() throws {
        let server = try Self.openServer()
        defer { server.stop() }
        let (alice, _) = try Self.signUp(server, "alice", "pw-a", email: "alice@example.org")
        let (bob, bobToken) = try Self.signUp(server, "bob", "pw-b")
        let session = ["X-Parse-Session-Token": bobToken]
        for path in ["/parse/users/\(alice)", "/parse/classes/_User/\(alice)"] {
            let read = try server.request("GET", path, headers: session)
            #expect(read.status == 404 && read.json["code"] as? Int == 101)
            #expect(!read.text.contains("alice@example.org"))
            let change = try server.json("PUT", path, ["password": "taken-over"], headers: session)
            #expect(change.status == 400 && change.json["code"] as? Int == 206)
            let delete = try server.request("DELETE", path, headers: session)
            #expect(delete.status == 404 && delete.json["code"] as? Int == 101)
            let anonymous = try server.request("GET", path)
            #expect(anonymous.status == 400 && anonymous.json["code"] as? Int == 206)
            let overridden = try server.json("POST", path, ["_method": "DELETE", "_SessionToken": bobToken])
            #expect(overridden.json["code"] as? Int == 101)
        }
        #expect(try Self.logIn(server, "alice", "pw-a").status == 200)
        // Self and the master key may; neither answer carries the password or its hash.
        let own = try server.request("GET", "/parse/users/\(bob)", headers: session)
        #expect(own.status == 200 && own.json["username"] as? String == "bob")
        let byMaster = try server.request("GET", "/parse/users/\(alice)", headers: Self.master)
        #expect(byMaster.json["email"] as? String == "alice@example.org")
        for r in [own, byMaster] { #expect(!r.text.contains("password") && !r.text.contains("scrypt")) }
        // Deleting oneself ends one's sessions; the master key deletes anyone.
        #expect(try server.request("DELETE", "/parse/users/\(bob)", headers: session).text == "{}")
        #expect(try Self.me(server, bobToken).json["code"] as? Int == 209)
        #expect(try server.request("DELETE", "/parse/users/\(alice)", headers: Self.master).status == 200)
        #expect(try server.request("GET", "/parse/users/\(alice)", headers: Self.master).status == 404)
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
