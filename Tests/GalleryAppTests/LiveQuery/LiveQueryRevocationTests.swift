import Foundation
import Testing

@testable import GalleryApp

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A LiveQuery subscription ends with the session that made it, in every instance: logout,
/// password change and account deletion through instance A reach a subscriber of instance B
/// through PostgreSQL (migration 0019), and expiry is timed by the instance itself.
@Suite(.serialized) struct LiveQueryRevocationTests {
    @Test func sessionsEndedOnInstanceA_EndTheirSubscriptionsOnInstanceB() throws {
        // Listening: the Python client logs in on instance A over HTTP.
        let a = try AccountTests.openServer(listening: true)
        defer { a.stop() }
        // Instance B: the same database, its own port, listener and session cache.
        try a.withSecondInstance(label: "galleryd.test.b") { b in
            #expect(b.liveQuery.waitUntilListening(timeout: 10))
            #expect(a.application.liveQuery.waitUntilListening(timeout: 10))

            let logout = try AccountTests.signUp(a, "rev-logout", "pw one")
            let password = try AccountTests.signUp(a, "rev-password", "pw two")
            let other = try #require(
                try AccountTests.logIn(a, "rev-password", "pw two").json["sessionToken"] as? String)
            let deleted = try AccountTests.signUp(a, "rev-delete", "pw three")
            let kept = try AccountTests.signUp(a, "rev-kept", "pw four")
            // A session that runs out in a few seconds, with no statement to announce it.
            let expiring = try a.makeUser("rev-expiry")
            try a.application.pool.query(
                "update sessions set expires_at = clock_timestamp() + interval '5 seconds' where user_id = $1",
                [expiring.objectId])

            let cases: [String: Any] = [
                "logout": ["token": logout.token],
                "password": ["token": password.token, "other": other, "user": password.id],
                "delete": ["token": deleted.token, "user": deleted.id],
                "expiry": ["token": expiring.token],
                "kept": ["token": kept.token],
            ]
            let json = String(decoding: try JSONSerialization.data(withJSONObject: cases), as: UTF8.self)
            let run = try runLiveQueryScript(
                "live_query_revocation_e2e.py",
                [a.baseURL, "http://127.0.0.1:\(b.port)", TestServer.appID, TestServer.masterKey, json])
            #expect(run.status == 0, "\(run.output)")
            #expect(run.output.contains("\"ok\": true"), "\(run.output)")
        }
    }

    @Test func endedSession_LeavesEveryInstancesSessionCacheAtOnce() throws {
        let a = try AccountTests.openServer()
        defer { a.stop() }
        try a.withSecondInstance(label: "galleryd.test.b") { b in
            #expect(b.liveQuery.waitUntilListening(timeout: 10))
            let user = try AccountTests.signUp(a, "cache-user", "pw")
            let onB = ["X-Parse-Application-Id": TestServer.appID, "X-Parse-Session-Token": user.token]
            func me() throws -> Int {
                var request = URLRequest(url: URL(string: "http://127.0.0.1:\(b.port)/parse/users/me")!)
                for (name, value) in onB { request.setValue(value, forHTTPHeaderField: name) }
                return try TestServer.send(request).status
            }
            #expect(try me() == 200)
            #expect(
                try a.request("POST", "/parse/logout", headers: ["X-Parse-Session-Token": user.token]).status == 200)
            // B remembered the token for 5 s; the notice makes it forget well before.
            let deadline = Date().addingTimeInterval(3)
            var status = try me()
            while status == 200 && Date() < deadline {
                Thread.sleep(forTimeInterval: 0.05)
                status = try me()
            }
            #expect(status == 400)
            #expect(Date() < deadline)
        }
    }
}
