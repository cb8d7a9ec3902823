import Foundation
import Testing

@testable import GalleryApp

/// User, login, logout and session requests inside `POST /parse/batch`, as Parse Server's batch
/// accepts them (the SDKs' `saveAll` of `_User` objects sends `POST /parse/users` and
/// `PUT /parse/users/<id>`): each runs through its own route with the batch's keys and session,
/// answered in batch format.
@Suite(.serialized) struct UserBatchTests {
    private typealias F = ManifestFixtures
    private static let master = ["X-Parse-Master-Key": TestServer.masterKey]

    private func batch(
        _ server: TestServer, _ requests: [[String: Any]], transaction: Bool? = nil,
        headers: [String: String] = [:]
    ) throws -> TestServer.Response {
        var body: [String: Any] = ["requests": requests]
        if let transaction { body["transaction"] = transaction }
        // As the SDKs send them: the app id, and the session in `headers` when there is one.
        return try server.json("POST", "/parse/batch", body, headers: headers, anonymous: true)
    }

    private func success(_ response: TestServer.Response, _ index: Int) -> [String: Any]? {
        guard response.jsonArray.indices.contains(index) else { return nil }
        return (response.jsonArray[index] as? [String: Any])?["success"] as? [String: Any]
    }

    private func errorCode(_ response: TestServer.Response, _ index: Int) -> Int? {
        guard response.jsonArray.indices.contains(index) else { return nil }
        return ((response.jsonArray[index] as? [String: Any])?["error"] as? [String: Any])?["code"] as? Int
    }

    @Test func saveAll_SignsUpAndUpdatesUsers_EachAsItsOwnRouteAnswers() throws {
        let server = try TestServer(workers: 0) { $0.signupOpen = true }
        defer { server.stop() }
        // Sign-ups (the SDK's paths carry the mount), one of them a taken username.
        let signUps = try batch(
            server,
            [
                [
                    "method": "POST", "path": "/parse/users",
                    "body": ["username": "carol", "password": "carol's passphrase"],
                ],
                [
                    "method": "POST", "path": "/parse/classes/_User",
                    "body": ["username": "dave", "password": "dave's passphrase"],
                ],
                ["method": "POST", "path": "/parse/users", "body": ["username": "carol", "password": "another one"]],
                ["method": "POST", "path": "/parse/users", "body": ["password": "no name"]],
            ])
        #expect(signUps.status == 200 && signUps.jsonArray.count == 4, "\(signUps.text)")
        let carol = try #require(success(signUps, 0)?["objectId"] as? String, "\(signUps.text)")
        let carolToken = try #require(success(signUps, 0)?["sessionToken"] as? String)
        let dave = try #require(success(signUps, 1)?["objectId"] as? String, "\(signUps.text)")
        #expect(success(signUps, 1)?["createdAt"] is String)
        #expect(errorCode(signUps, 2) == 202 && errorCode(signUps, 3) == 200, "\(signUps.text)")
        let carolHeaders = ["X-Parse-Session-Token": carolToken]

        // saveAll of changed users with carol's session: her own succeeds, dave's is Parse's 206.
        let updates = try batch(
            server,
            [
                ["method": "PUT", "path": "/parse/users/\(carol)", "body": ["email": "carol@example.org"]],
                ["method": "PUT", "path": "/parse/users/\(dave)", "body": ["email": "dave@example.org"]],
                ["method": "PUT", "path": "/parse/users/\(carol)", "body": ["password": 5]],
            ], headers: carolHeaders)
        #expect(success(updates, 0)?["updatedAt"] is String, "\(updates.text)")
        #expect(errorCode(updates, 1) == 206 && errorCode(updates, 2) == 111, "\(updates.text)")
        let me = try server.request("GET", "/parse/users/me", headers: carolHeaders)
        #expect(me.json["email"] as? String == "carol@example.org")

        // Reads: users/me, a user find with its parameters in the body, sessions.
        let reads = try batch(
            server,
            [
                ["method": "GET", "path": "/parse/users/me"],
                ["method": "GET", "path": "/parse/users", "body": ["where": ["username": "dave"], "count": 1]],
                ["method": "GET", "path": "/parse/classes/_User/\(carol)"],
                ["method": "GET", "path": "/parse/sessions/me"],
                ["method": "GET", "path": "/parse/sessions"],
                ["method": "GET", "path": "/parse/users/\(dave)"],
            ], headers: carolHeaders)
        #expect(success(reads, 0)?["username"] as? String == "carol", "\(reads.text)")
        #expect(success(reads, 0)?["sessionToken"] as? String == carolToken)
        let found = success(reads, 1)
        #expect(
            (found?["results"] as? [[String: Any]])?.compactMap { $0["objectId"] as? String } == [dave], "\(reads.text)"
        )
        #expect(found?["count"] as? Int == 1)
        #expect(success(reads, 2)?["email"] as? String == "carol@example.org")
        #expect(success(reads, 3)?["sessionToken"] as? String == carolToken)
        #expect((success(reads, 4)?["results"] as? [Any])?.count == 1)
        #expect(errorCode(reads, 5) == 101, "another user's account is not found")

        // The master key's batch may change anyone.
        let masterUpdate = try batch(
            server,
            [
                ["method": "PUT", "path": "/parse/users/\(dave)", "body": ["email": "dave@example.org"]]
            ], headers: Self.master)
        #expect(success(masterUpdate, 0)?["updatedAt"] is String, "\(masterUpdate.text)")

        // Login, then logout of the batch's own session: its token is revoked.
        let login = try batch(
            server,
            [
                [
                    "method": "POST", "path": "/parse/login",
                    "body": ["username": "dave", "password": "dave's passphrase"],
                ],
                ["method": "POST", "path": "/parse/login", "body": ["username": "dave", "password": "wrong"]],
            ])
        let daveToken = try #require(success(login, 0)?["sessionToken"] as? String, "\(login.text)")
        #expect(errorCode(login, 1) == 101, "\(login.text)")
        let logout = try batch(
            server, [["method": "POST", "path": "/parse/logout"]], headers: ["X-Parse-Session-Token": daveToken])
        #expect(success(logout, 0) != nil, "\(logout.text)")
        #expect(
            F.code(try server.request("GET", "/parse/users/me", headers: ["X-Parse-Session-Token": daveToken])) == 209)
    }

    @Test func userRequests_AreRefusedInATransaction_AndUnknownPathsAreErrors() throws {
        let server = try TestServer(workers: 0) { $0.signupOpen = true }
        defer { server.stop() }
        let alice = try server.makeUser("alice")
        let gallery = try #require(
            try server.json("POST", "/parse/classes/Gallery", ["name": "G"], headers: alice.headers)
                .json["objectId"] as? String)
        // A transaction: nothing is kept, the answer is the refusal (119), the gallery keeps its name.
        let transaction = try batch(
            server,
            [
                ["method": "PUT", "path": "/parse/classes/Gallery/\(gallery)", "body": ["name": "renamed"]],
                [
                    "method": "POST", "path": "/parse/users",
                    "body": ["username": "eve", "password": "eve's passphrase"],
                ],
            ], transaction: true, headers: alice.headers)
        #expect(transaction.status == 400 && F.code(transaction) == 119, "\(transaction.text)")
        #expect(
            try server.request("GET", "/parse/classes/Gallery/\(gallery)", headers: alice.headers).json["name"]
                as? String == "G")
        let eve = try server.application.pool.query("select count(*) from users where username = 'eve'").first!.decode(
            Int64.self, 0)
        #expect(eve == 0)

        // Paths no route has, or that a batch does not run, are errors in batch format; the rest still run.
        let mixed = try batch(
            server,
            [
                ["method": "GET", "path": "/parse/users/me/extra"],
                ["method": "PATCH", "path": "/parse/users/me"],
                ["method": "POST", "path": "/parse/files/a.jpg"],
                ["method": "DELETE", "path": "/parse/purge/Gallery/\(gallery)"],
                ["method": "GET", "path": "/parse/users/me"],
            ], headers: alice.headers)
        #expect(mixed.jsonArray.count == 5, "\(mixed.text)")
        for index in 0..<4 { #expect(errorCode(mixed, index) == 107, "\(index): \(mixed.text)") }
        #expect(success(mixed, 4)?["username"] as? String == "alice", "\(mixed.text)")
        // Without a session, a user find in a batch is the same 209 as alone.
        let anonymous = try batch(server, [["method": "GET", "path": "/parse/users"]])
        #expect(errorCode(anonymous, 0) == 209, "\(anonymous.text)")
    }
}
