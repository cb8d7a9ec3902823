import Foundation
import HTTPServer
import Testing

@testable import GalleryApp

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What the SDKs expect around the objects: `/health` by any method, no caching of writes and errors,
/// `X-Parse-Request-Id` replays, and the JavaScript SDK's bodies and headers.
extension ParseSDKTests {
    // MARK: 6. POST /parse/health

    @Test func health_AnswersAnyMethod_AsParseServer() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        for method in ["POST", "PUT", "DELETE", "GET"] {
            let r = try server.request(method, "/parse/health")
            #expect(r.status == 200, "\(method): \(r.text)")
            #expect(r.json["status"] as? String == "ok")
        }
    }

    // MARK: 7. No caching of writes and errors

    @Test func writesAndErrors_AreMarkedNoStore_GetsAreNot() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let photos = try server.insertPhotos(1)
        let gallery = try server.json("POST", "/parse/classes/Gallery", ["name": "Cached"])
        let id = try #require(gallery.json["objectId"] as? String)
        let answers: [(String, TestServer.Response)] = [
            ("create", gallery),
            ("update", try server.json("PUT", "/parse/classes/Gallery/\(id)", ["name": "Renamed"])),
            ("batch", try server.json("POST", "/parse/batch", ["requests": [[String: Any]]()])),
            ("get override", try server.json("POST", "/parse/classes/Photo", ["_method": "GET"])),
            ("health", try server.request("POST", "/parse/health")),
            (
                "upload",
                try server.request(
                    "POST", "/parse/files/a.jpg", body: Data(try TestJPEG.make(width: 8, height: 8)),
                    headers: ["Content-Type": "image/jpeg"])
            ),
            ("delete", try server.request("DELETE", "/parse/classes/Photo/\(photos[0])")),
            ("get error", try server.request("GET", "/parse/classes/Photo/zzzzzzzzzz")),
            ("query error", try get(server, "/parse/classes/Photo", [("order", "nosuch")])),
            ("unknown method", try server.request("PATCH", "/parse/classes/Photo")),
            ("bucket error", try server.request("GET", "/bucket/originals/nothing.jpg")),
        ]
        for (name, r) in answers {
            #expect(r.header("Cache-Control") == "no-store", "\(name): \(r.status) \(r.headers)")
        }
        let find = try server.request("GET", "/parse/classes/Photo")
        #expect(find.status == 200 && find.header("Cache-Control") != "no-store")
        #expect(try server.request("GET", "/parse/classes/Gallery/\(id)").header("Cache-Control") != "no-store")
    }

    @Test func urlSession_WithItsDefaultCache_GetsFreshAnswersAfterWrites() throws {
        let server = try TestServer(workers: 0, listening: true)
        defer { server.stop() }
        // The SDK's default: a URLSession with a URLCache in memory and on disk (ParseSwift's sizes).
        let cacheDirectory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "galleryd-urlcache-" + UUID().uuidString)
        defer { try? FileManager.default.removeItem(at: cacheDirectory) }
        let configuration = URLSessionConfiguration.default
        configuration.urlCache = URLCache(
            memoryCapacity: 512_000, diskCapacity: 10_000_000, diskPath: cacheDirectory.path)
        configuration.requestCachePolicy = .useProtocolCachePolicy
        let session = URLSession(configuration: configuration)
        defer { session.invalidateAndCancel() }
        func send(_ method: String, _ path: String, _ body: [String: Any]? = nil) throws -> [String: Any] {
            var request = URLRequest(url: URL(string: server.baseURL + path)!)
            request.httpMethod = method
            request.setValue(TestServer.appID, forHTTPHeaderField: "X-Parse-Application-Id")
            request.setValue(TestServer.masterKey, forHTTPHeaderField: "X-Parse-Master-Key")
            if let body {
                request.httpBody = try JSONSerialization.data(withJSONObject: body)
                request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            }
            let done = DispatchSemaphore(value: 0)
            nonisolated(unsafe) var answer: Data?
            session.dataTask(with: request) { data, _, _ in
                answer = data
                done.signal()
            }.resume()
            done.wait()
            return (try? JSONSerialization.jsonObject(with: answer ?? Data())) as? [String: Any] ?? [:]
        }
        let created = try send("POST", "/parse/classes/Gallery", ["name": "First"])
        let id = try #require(created["objectId"] as? String)
        let found = try send("GET", "/parse/classes/Gallery?limit=10&order=%5B%22-createdAt%22%5D&where=%7B%7D")
        #expect((found["results"] as? [[String: Any]])?.map { $0["objectId"] as? String } == [id], "\(found)")
        _ = try send("PUT", "/parse/classes/Gallery/\(id)", ["name": "Second"])
        let second = try send("POST", "/parse/classes/Gallery", ["name": "Third"])
        #expect(second["objectId"] as? String != id)
        let again = try send("GET", "/parse/classes/Gallery?limit=10&order=%5B%22name%22%5D&where=%7B%7D")
        #expect(
            (again["results"] as? [[String: Any]])?.compactMap { $0["name"] as? String } == ["Second", "Third"],
            "\(again)")
        // The very same find and fetch as before the writes: today's answers, not the stored ones.
        let repeated = try send("GET", "/parse/classes/Gallery?limit=10&order=%5B%22-createdAt%22%5D&where=%7B%7D")
        #expect((repeated["results"] as? [[String: Any]])?.count == 2, "\(repeated)")
        let fetched = try send("GET", "/parse/classes/Gallery/\(id)")
        _ = try send("PUT", "/parse/classes/Gallery/\(id)", ["name": "Fourth"])
        #expect(fetched["name"] as? String == "Second")
        #expect(try send("GET", "/parse/classes/Gallery/\(id)")["name"] as? String == "Fourth")
    }

    // MARK: X-Parse-Request-Id and a lost answer

    @Test func requestId_ReplaysACommittedCreate_WhoseAnswerWasLost_AndRunsAgainWhatRolledBack() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let api = ParseAPI(application: server.application)
        let pool = server.application.pool
        let scope = "/parse/classes/Gallery\n"
        func galleries(_ name: String) throws -> Int64 {
            try pool.query("select count(*) from galleries where name = $1", [name]).first!.decode(Int64.self, 0)
        }
        let first = ParseRequestIdempotency(pool: pool)
        let created = try first.run(requestId: "lost-answer", scope: scope, durable: true) {
            try api.create("Gallery", body: Array(#"{"name":"Once"}"#.utf8))
        }
        #expect(created.status == .created)
        // The COMMIT went through but the answer never arrived (the session dropped: 503, "may or
        // may not have completed"), and the memory of it is gone with the error, or the retry
        // reaches another instance: the record made with the object answers it.
        let elsewhere = ParseRequestIdempotency(pool: pool)
        var ranAgain = false
        let retried = try elsewhere.run(requestId: "lost-answer", scope: scope, durable: true) {
            ranAgain = true
            return try api.create("Gallery", body: Array(#"{"name":"Once"}"#.utf8))
        }
        #expect(!ranAgain)
        #expect(
            retried.status == created.status && retried.json == created.json && retried.location == created.location)
        #expect(try galleries("Once") == 1)
        // A create that fails after its insert commits neither the object nor the record: the retry runs.
        #expect(throws: ParseError.self) {
            try elsewhere.run(requestId: "rolled-back", scope: scope, durable: true) {
                _ = try api.create("Gallery", body: Array(#"{"name":"Lost"}"#.utf8))
                throw ParseError.internalServerError("the connection dropped before COMMIT")
            }
        }
        #expect(try galleries("Lost") == 0)
        let rerun = try ParseRequestIdempotency(pool: pool).run(requestId: "rolled-back", scope: scope, durable: true) {
            try api.create("Gallery", body: Array(#"{"name":"Later"}"#.utf8))
        }
        #expect(rerun.status == .created)
        #expect(try galleries("Later") == 1)
        // Over HTTP: the route records its creates the same way.
        let records = { try pool.query("select count(*) from request_ids").first!.decode(Int64.self, 0) }
        let before = try records()
        let headers = ["X-Parse-Request-Id": "over-http"]
        let answer = try server.json("POST", "/parse/classes/Gallery", ["name": "Http"], headers: headers)
        #expect(answer.status == 201, "\(answer.text)")
        #expect(try records() == before + 1)
    }

    // MARK: Other SDKs' extras

    @Test func javascriptSDKBodiesAndParseHeaders_AreAccepted() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        // The JavaScript SDK: text/plain, keys, the user's session and bookkeeping in the body.
        let user = try server.makeUser("js")
        let body: [String: Any] = [
            "name": "From JS", "_ApplicationId": TestServer.appID, "_SessionToken": user.token,
            "_ClientVersion": "js5.3.0",
            "_InstallationId": "2b9f5c1e-0000-4000-8000-000000000000", "_ContentType": "application/json",
        ]
        let js = try server.request(
            "POST", "/parse/classes/Gallery", body: try JSONSerialization.data(withJSONObject: body),
            headers: ["Content-Type": "text/plain"], appID: nil)
        #expect(js.status == 201, "\(js.text)")
        // ParseSwift's headers.
        let headers = [
            "X-Parse-Client-Version": "swift4.14.2", "X-Parse-Installation-Id": "6c1b4d8e-0000-4000-8000-000000000000",
            "X-Parse-Request-Id": "0E4B7D7A-6C2F-4F7E-9C55-6C1A2B3C4D5E",
        ]
        let first = try server.json("POST", "/parse/classes/Gallery", ["name": "Once"], headers: headers)
        #expect(first.status == 201, "\(first.text)")
        // The same request id again (a retry after a lost answer): the first answer, no second gallery.
        let retry = try server.json("POST", "/parse/classes/Gallery", ["name": "Once"], headers: headers)
        #expect(retry.status == 201 && retry.body == first.body, "\(retry.text)")
        var fresh = headers
        fresh["X-Parse-Request-Id"] = "1E4B7D7A-6C2F-4F7E-9C55-6C1A2B3C4D5E"
        let other = try server.json("POST", "/parse/classes/Gallery", ["name": "Once"], headers: fresh)
        #expect(other.status == 201 && other.json["objectId"] as? String != first.json["objectId"] as? String)
        let count = try server.application.pool.query("select count(*) from galleries where name = 'Once'").first!
            .decode(Int64.self, 0)
        #expect(count == 2)
        // saveAll() retried with its request id: the first answer, nothing created twice.
        var batchHeaders = headers
        batchHeaders["X-Parse-Request-Id"] = "3E4B7D7A-6C2F-4F7E-9C55-6C1A2B3C4D5E"
        let batch: [String: Any] = [
            "requests": [["method": "POST", "path": "/parse/classes/Gallery", "body": ["name": "Batched"]]],
            "transaction": false,
        ]
        let firstBatch = try server.json("POST", "/parse/batch", batch, headers: batchHeaders)
        let retriedBatch = try server.json("POST", "/parse/batch", batch, headers: batchHeaders)
        #expect(firstBatch.status == 200 && retriedBatch.body == firstBatch.body, "\(retriedBatch.text)")
        #expect(
            try server.application.pool.query("select count(*) from galleries where name = 'Batched'").first!.decode(
                Int64.self, 0) == 1)
        // A failed create is not remembered: the retry runs again.
        var failing = headers
        failing["X-Parse-Request-Id"] = "2E4B7D7A-6C2F-4F7E-9C55-6C1A2B3C4D5E"
        #expect(try server.json("POST", "/parse/classes/Gallery", ["name": ""], headers: failing).status == 400)
        #expect(try server.json("POST", "/parse/classes/Gallery", ["name": "Later"], headers: failing).status == 201)
    }
}
