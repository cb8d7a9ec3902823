import Foundation
import Testing

@testable import GalleryApp

/// `/web/config.json` tells the web page how to call the API and whether it may offer sign-up
/// (`signup_open`), read-only, without a secret and without a word about access (the page always
/// logs in: the app id alone reads nothing); and the calls the page's login makes answer as it
/// expects (Parse's message, 429 with Retry-After, 209 after logout).
@Suite(.serialized) struct WebRoutesTests {
    @Test func config_IsTheSame_BeforeAndAfterTheFirstAccount_AndSignupClosedByDefault() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let before = try server.request("GET", "/web/config.json", appID: nil)
        #expect(before.status == 200)
        #expect(before.header("Cache-Control") == "no-cache")
        #expect(before.json["signupOpen"] as? Bool == false)
        #expect(before.json["accountsExist"] == nil, "nothing that implies open access")
        let created = try server.json(
            "POST", "/parse/users", ["username": "alice", "password": "correct horse"],
            headers: ["X-Parse-Master-Key": TestServer.masterKey])
        #expect(created.status == 201)
        let after = try server.request("GET", "/web/config.json", appID: nil)
        #expect(after.status == 200)
        #expect(after.body == before.body)
        // Nothing about the account itself, and no key or token.
        for secret in ["alice", TestServer.masterKey, created.json["sessionToken"] as? String ?? "r:"] {
            #expect(!after.text.contains(secret), "\(secret)")
        }
        #expect(Set(after.json.keys) == ["appId", "mountPath", "livePath", "restKeyRequired", "signupOpen"])
    }

    @Test func config_SaysSignupOpen_WhenConfigured() throws {
        let server = try InProcessServer { $0.signupOpen = true }
        defer { server.stop() }
        let config = server.request("GET", "/web/config.json", appID: nil)
        #expect(config.json["signupOpen"] as? Bool == true)
    }

    @Test func config_IsReadOnly() throws {
        let server = try InProcessServer()
        defer { server.stop() }
        let post = try server.json(
            "POST", "/web/config.json", ["signupOpen": true], headers: ["X-Parse-Master-Key": TestServer.masterKey])
        #expect(post.status == 405)
    }

    @Test func config_NeedsNoDatabase() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        // The users table gone: the config does not ask the database anything.
        try server.application.pool.query("alter table users rename to users_gone")
        let config = try server.request("GET", "/web/config.json", appID: nil)
        try server.application.pool.query("alter table users_gone rename to users")
        #expect(config.status == 200 && config.json["appId"] as? String == TestServer.appID, "\(config.text)")
    }

    /// The answers web/app.js relies on: a wrong password is Parse's 101 message; repeated failures
    /// are 429 with Retry-After; the token works as a header; after logout the token is 209.
    @Test func login_AnswersAsThePageExpects() throws {
        let server = try TestServer(workers: 0) { $0.loginFreeFailures = 1 }
        defer { server.stop() }
        let master = ["X-Parse-Master-Key": TestServer.masterKey]
        #expect(
            try server.json("POST", "/parse/users", ["username": "bob", "password": "secret one"], headers: master)
                .status == 201)
        let wrong = try server.json("POST", "/parse/login", ["username": "bob", "password": "nope"])
        #expect(wrong.status == 404)
        #expect(wrong.json["code"] as? Int == 101)
        #expect(wrong.json["error"] as? String == "Invalid username/password.")
        var throttled: TestServer.Response?
        for _ in 0..<6 {
            let answer = try server.json("POST", "/parse/login", ["username": "bob", "password": "nope"])
            if answer.status == 429 {
                throttled = answer
                break
            }
        }
        let blocked = try #require(throttled, "no 429 after repeated failures")
        #expect(blocked.json["code"] as? Int == 155)
        let seconds = try #require(blocked.header("Retry-After").flatMap { Int($0) })
        #expect(seconds >= 1)
        Thread.sleep(forTimeInterval: Double(seconds) + 0.2)
        let login = try server.json("POST", "/parse/login", ["username": "bob", "password": "secret one"])
        #expect(login.status == 200)
        let token = try #require(login.json["sessionToken"] as? String)
        let me = try server.request("GET", "/parse/users/me", headers: ["X-Parse-Session-Token": token])
        #expect(me.json["username"] as? String == "bob")
        #expect(try server.request("POST", "/parse/logout", headers: ["X-Parse-Session-Token": token]).status == 200)
        let ended = try server.request("GET", "/parse/classes/Photo", headers: ["X-Parse-Session-Token": token])
        #expect(ended.json["code"] as? Int == 209)
    }
}
