import Foundation
import Postgres
import Testing

@testable import GalleryApp

/// Sign-up, login, `users/me`, logout and sessions over HTTP against a real server and PostgreSQL,
/// with Parse's answers for every failure.
@Suite(.serialized) struct AccountTests {
    static let master = ["X-Parse-Master-Key": TestServer.masterKey]

    /// A server with sign-up open (most tests sign up without the master key), in process unless `listening`.
    static func openServer(listening: Bool = false, _ configure: (inout GalleryConfiguration) -> Void = { _ in }) throws
        -> TestServer
    {
        try TestServer(workers: 0, listening: listening) {
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
}
