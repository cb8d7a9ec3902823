import Foundation
import Testing

@testable import GalleryApp
@testable import HTTPServer

/// The route groups' middleware, called in process (`InProcessServer`: the router and its
/// middleware, no socket, no database): the keys each group requires, checked before the handler
/// (and before the body on an upload), CORS on answers and errors, and each URL space's error format.
@Suite struct RouteMiddlewareTests {
    static let origin = "http://photos.example:3000"

    @Test func keyGroups_RefuseWrongKeys_BeforeTheHandler_WithParsesAnswer() throws {
        let server = try InProcessServer()
        defer { server.stop() }
        // The database is never reached: a handler that ran would answer 5xx, not 403.
        server.application.pool.shutdown()
        let client: [(String, String)] = [
            ("GET", "/parse/classes/Photo"), ("GET", "/parse/classes/Photo/p000000001"),
            ("PUT", "/parse/classes/Photo/p000000001"), ("DELETE", "/parse/classes/Photo/p000000001"),
            ("DELETE", "/parse/purge/Photo/p000000001"), ("POST", "/parse/batch"), ("POST", "/parse/files/a.jpg"),
            ("POST", "/parse/classes/Photo"), ("POST", "/parse/classes/Photo/p000000001"), ("POST", "/parse/users"),
            ("GET", "/parse/users/me"), ("POST", "/parse/login"),
        ]
        for (method, path) in client {
            let r = server.request(method, path, body: method == "GET" ? nil : Data("{}".utf8), appID: "wrong")
            #expect(r.status == 403, "\(method) \(path)")
            #expect(r.text == #"{"error":"unauthorized"}"#, "\(method) \(path)")
        }
        // The app's keys alone do not open the master key's routes.
        for (method, path) in [
            ("DELETE", "/parse/purge/Photo"), ("GET", "/parse/serverInfo"), ("POST", "/parse/jobs/retry"),
        ] {
            let r = server.request(method, path, body: method == "POST" ? Data("{}".utf8) : nil, anonymous: true)
            #expect(r.status == 403, "\(method) \(path)")
        }
        // The master key does, and this one needs nothing else.
        let info = server.request("GET", "/parse/serverInfo")
        #expect(info.status == 200)
        #expect(info.json["parseServerVersion"] != nil)
    }

    @Test func bodyKeys_AreLeftToTheRoute_OnlyWhenTheHeadersHaveNone() throws {
        let server = try InProcessServer()
        defer { server.stop() }
        server.application.pool.shutdown()
        let garbage = Data(#"{"_method": "GET", "#.utf8)
        for path in ["/parse/classes/Photo", "/parse/users"] {
            // No keys anywhere: 403 before the body is a JSON error.
            #expect(
                server.request("POST", path, body: garbage, headers: ["Content-Type": "text/plain"], appID: nil).status
                    == 403)
            // Right keys in the headers: the body is now the client's error.
            let bad = server.request("POST", path, body: garbage)
            #expect(bad.status == 400, "\(path)")
            #expect(bad.json["code"] as? Int == ParseError.Code.invalidJSON, "\(path)")
            // A wrong header is not rescued by right keys in the body.
            let body = try JSONSerialization.data(withJSONObject: [
                "_method": "GET", "_ApplicationId": TestServer.appID,
            ])
            #expect(
                server.request("POST", path, body: body, headers: ["Content-Type": "text/plain"], appID: "wrong").status
                    == 403)
        }
    }

    @Test func browserAccess_DecoratesAnswersAndErrors_OnTheMountAndTheBucket_Only() throws {
        let server = try InProcessServer()
        defer { server.stop() }
        server.application.pool.shutdown()
        let origin = ["Origin": Self.origin]
        let refused = server.request("GET", "/parse/classes/Photo", headers: origin, appID: "wrong")
        #expect(refused.status == 403)
        #expect(refused.header("Access-Control-Allow-Origin") == "*")
        let health = server.request("GET", "/parse/health", headers: origin, appID: nil)
        #expect(health.status == 200)
        #expect(health.header("Access-Control-Allow-Origin") == "*")
        let unrouted = server.request("GET", "/parse/nothing/here", headers: origin)
        #expect(unrouted.status == 404)
        #expect(unrouted.json["code"] as? Int == ParseError.Code.invalidClassName)
        #expect(unrouted.header("Access-Control-Allow-Origin") == "*")
        let bucket = server.request("GET", "/bucket/thumbnails/nosuchid00.jpg", headers: origin, appID: nil)
        #expect(bucket.status == 404)
        #expect(bucket.text.contains("<Code>NoSuchKey</Code>"))
        #expect(bucket.header("Access-Control-Allow-Origin") == "*")
        // Outside the API nothing changes.
        #expect(server.request("GET", "/health", headers: origin).header("Access-Control-Allow-Origin") == nil)
        #expect(server.request("GET", "/web/config.json", headers: origin).header("Access-Control-Allow-Origin") == nil)
    }

    @Test func errors_TakeTheFormatOfTheirURLSpace() throws {
        let server = try InProcessServer()
        defer { server.stop() }
        server.application.pool.shutdown()
        let notAllowed = server.request("PATCH", "/parse/classes/Photo")
        #expect(notAllowed.status == 405)
        #expect(notAllowed.json["code"] as? Int == ParseError.Code.operationForbidden)
        #expect(notAllowed.header("Allow")?.contains("POST") == true)
        let simulated = server.request(
            "GET", "/bucket/thumbnails/x.jpg",
            headers: ["X-Gallery-Simulate": "error=1", "X-Parse-Master-Key": TestServer.masterKey])
        #expect(simulated.status == 503)
        #expect(simulated.text.contains("<Code>SlowDown</Code>"))
        let elsewhere = server.request("GET", "/nowhere", appID: nil)
        #expect(elsewhere.status == 404)
        #expect(elsewhere.text == "not found\n")
    }
}
