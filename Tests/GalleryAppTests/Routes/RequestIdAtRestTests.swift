import Foundation
import Testing

@testable import GalleryApp

/// `X-Parse-Request-Id` records at rest: `request_ids` holds digests, never a session token or the
/// caller's scope; expired records are deleted on a timer; a sign-up's answer is replayed only to
/// a retry with the same credentials.
@Suite(.serialized) struct RequestIdAtRestTests {
    @Test func create_RecordsADigest_NeverTheSessionToken_AndStillReplays() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let user = try server.makeUser("ida")
        let headers = user.headers.merging(["X-Parse-Request-Id": "req-at-rest-1"]) { $1 }
        let first = try server.json("POST", "/parse/classes/Gallery", ["name": "At rest"], headers: headers)
        #expect(first.status == 201, "\(first.text)")
        let again = try server.json("POST", "/parse/classes/Gallery", ["name": "At rest"], headers: headers)
        #expect(again.json["objectId"] as? String == first.json["objectId"] as? String)
        let rows = try server.application.pool.query(
            "select key, body, coalesce(location, '') as location from request_ids")
        #expect(rows.count == 1)
        for row in rows {
            let key = try row.decode(String.self, "key")
            #expect(key.count == 64 && key.allSatisfy { $0.isHexDigit && !$0.isUppercase }, "\(key)")
            for column in ["key", "body", "location"] {
                let text = try row.decode(String.self, column)
                #expect(!text.contains(user.token), "\(column) holds the session token")
                #expect(!text.contains("req-at-rest-1"), "\(column) holds the request id")
            }
        }
        // The table refuses a key in clear.
        #expect(throws: (any Error).self) {
            try RequestIdRepository(pool: server.application.pool).record(
                .init(status: 201, reason: "Created", json: [], location: nil),
                for: "/parse/classes/Gallery\n\(user.token)\nx", ttl: 60)
        }
    }

    @Test func expiredRecords_AreDeletedByTheTimer_WithoutFurtherCreates() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let pool = server.application.pool
        let records = RequestIdRepository(pool: pool)
        let answer = RequestIdRepository.Answer(status: 201, reason: "Created", json: Array("{}".utf8), location: nil)
        let expired = ParseRequestIdempotency.recordKey(scope: "/parse/classes/Gallery\n", requestId: "expired")
        let live = ParseRequestIdempotency.recordKey(scope: "/parse/classes/Gallery\n", requestId: "live")
        try records.record(answer, for: expired, ttl: -1)
        try records.record(answer, for: live, ttl: 300)
        let count = { (key: String) in
            try pool.query("select count(*) from request_ids where key = $1", [key]).first!.decode(Int64.self, 0)
        }
        let idempotency = ParseRequestIdempotency(pool: pool, cleanupInterval: 0.1)
        defer { idempotency.stop() }
        let deadline = Date().addingTimeInterval(10)
        while try count(expired) > 0 && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        #expect(try count(expired) == 0)
        #expect(try count(live) == 1)
    }

    @Test func signUpReplay_IsKeyedByTheCredentials_NotTheRequestIdAlone() throws {
        let server = try TestServer(workers: 0) { $0.signupOpen = true }
        defer { server.stop() }
        let headers = ["X-Parse-Request-Id": "signup-replay"]
        // An SDK's retry sends the same bytes: serialized once (two dictionaries may order their keys
        // differently, which would be another body).
        let credentials = try JSONSerialization.data(
            withJSONObject: ["username": "eve", "password": "pw-eve-1"], options: .sortedKeys)
        let first = try server.request("POST", "/parse/users", body: credentials, headers: headers)
        #expect(first.status == 201)
        let token = try #require(first.json["sessionToken"] as? String)
        // Someone who learnt the request id, with other credentials, gets no replay (and no token).
        let other = try server.json("POST", "/parse/users", ["username": "eve", "password": "guess"], headers: headers)
        #expect(other.json["sessionToken"] == nil, "\(other.text)")
        #expect(other.json["code"] as? Int == 202, "\(other.text)")
        // The real retry still gets the first answer.
        let retry = try server.request("POST", "/parse/users", body: credentials, headers: headers)
        #expect(retry.json["sessionToken"] as? String == token, "\(retry.status) \(retry.text)")
    }
}
