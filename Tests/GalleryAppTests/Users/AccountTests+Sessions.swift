import Foundation
import Postgres
import Testing

@testable import GalleryApp

/// Sessions: expiry (209), their length, revocation seen at once through the cache, a password change
/// revoking the others, and another user's account refused.
extension AccountTests {
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
}
