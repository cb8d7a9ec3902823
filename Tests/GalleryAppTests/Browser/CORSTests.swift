import Foundation
import HTTPServer
import Testing

@testable import GalleryApp

/// CORS on the Parse mount and the bucket: headers on answers and errors, preflight with no database.
@Suite(.serialized) struct CORSTests {
    static let origin = "http://photos.example:3000"

    @Test func preflight_AllowsEveryParseHeader_WithoutTheDatabase() throws {
        let server = try InProcessServer()
        defer { server.stop() }
        // No database from here on: a preflight must still be answered.
        server.application.pool.shutdown()
        for path in [
            "/parse/classes/Photo", "/parse/files/a.jpg", "/parse/batch", "/bucket/thumbnails/x.jpg", "/parse",
        ] {
            let r = server.request(
                "OPTIONS", path,
                headers: [
                    "Origin": Self.origin, "Access-Control-Request-Method": "POST",
                    "Access-Control-Request-Headers": "x-parse-application-id, x-parse-session-token, content-type",
                ], appID: nil)
            #expect(r.status == 204, "\(path)")
            #expect(r.header("Access-Control-Allow-Origin") == "*", "\(path)")
            let allowed = Set(
                (r.header("Access-Control-Allow-Headers") ?? "").lowercased()
                    .split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
            for header in [
                "x-parse-application-id", "x-parse-rest-api-key", "x-parse-javascript-key", "x-parse-master-key",
                "x-parse-session-token", "x-parse-installation-id", "x-parse-client-version",
                "x-parse-revocable-session", "x-parse-request-id", "content-type", "x-gallery-simulate",
            ] {
                #expect(allowed.contains(header), "\(path) \(header)")
            }
            #expect(r.header("Access-Control-Allow-Methods")?.contains("DELETE") == true)
            #expect(r.header("Access-Control-Max-Age") != nil)
        }
        #expect(server.request("GET", "/parse/classes/Photo").status >= 500)
    }

    @Test func answers_AndErrors_CarryTheOrigin_OnTheMountAndTheBucket() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let ok = try server.request("GET", "/parse/classes/Photo?limit=1", headers: ["Origin": Self.origin])
        #expect(ok.status == 200)
        #expect(ok.header("Access-Control-Allow-Origin") == "*")
        #expect(ok.header("Access-Control-Expose-Headers")?.contains("Location") == true)
        // A refused key (403), a missing object (404), an unknown route (router 404), a bucket miss (S3 XML 404).
        let refused = try server.request(
            "GET", "/parse/classes/Photo", headers: ["Origin": Self.origin], appID: "wrong")
        #expect(refused.status == 403)
        #expect(refused.header("Access-Control-Allow-Origin") == "*")
        let missing = try server.request("GET", "/parse/classes/Photo/nosuchid00", headers: ["Origin": Self.origin])
        #expect(missing.status == 404)
        #expect(missing.json["code"] as? Int == 101)
        #expect(missing.header("Access-Control-Allow-Origin") == "*")
        let unrouted = try server.request("GET", "/parse/nothing/here", headers: ["Origin": Self.origin])
        #expect(unrouted.status == 404)
        #expect(unrouted.header("Access-Control-Allow-Origin") == "*")
        let bucket = try server.request(
            "GET", "/bucket/thumbnails/nosuchid00.jpg", headers: ["Origin": Self.origin], appID: nil)
        #expect(bucket.status == 404)
        #expect(bucket.text.contains("<Code>NoSuchKey</Code>"))
        #expect(bucket.header("Access-Control-Allow-Origin") == "*")
        // Outside the API (operations) nothing changes.
        #expect(
            try server.request("GET", "/health", headers: ["Origin": Self.origin]).header("Access-Control-Allow-Origin")
                == nil)
    }

    @Test func configuredOrigins_AreEchoed_AndOthersGetNoGrant() throws {
        let server = try TestServer(workers: 0) { $0.corsOrigins = "https://a.example, \(Self.origin)" }
        defer { server.stop() }
        let allowed = try server.request("GET", "/parse/classes/Photo?limit=1", headers: ["Origin": Self.origin])
        #expect(allowed.header("Access-Control-Allow-Origin") == Self.origin)
        #expect(allowed.header("Vary")?.contains("Origin") == true)
        let other = try server.request(
            "GET", "/parse/classes/Photo?limit=1", headers: ["Origin": "https://evil.example"])
        #expect(other.status == 200)
        #expect(other.header("Access-Control-Allow-Origin") == nil)
        let preflight = try server.request(
            "OPTIONS", "/parse/classes/Photo",
            headers: [
                "Origin": "https://evil.example", "Access-Control-Request-Method": "GET",
            ], appID: nil)
        #expect(preflight.status == 204)
        #expect(preflight.header("Access-Control-Allow-Origin") == nil)
    }

    @Test func corsOrigins_RefusesWhatIsNotAnOrigin() throws {
        for bad in ["", "photos.example", "https://photos.example/path", "ftp://x"] {
            #expect(throws: ConfigurationError.self, "\(bad)") {
                try GalleryConfiguration.load(file: nil, environment: ["GALLERYD_CORS_ORIGINS": bad])
            }
        }
        let c = try GalleryConfiguration.load(
            file: nil, environment: ["GALLERYD_CORS_ORIGINS": "https://a.example,http://b:8080"])
        #expect(c.corsOrigins == "https://a.example,http://b:8080")
        #expect(GalleryConfiguration().corsOrigins == "*")
    }

    /// Any origin (the default): the two fields once each on every answer, whatever the request's
    /// `Origin`, replacing a handler's own, and no `Vary`; a configured list echoes the origin.
    @Test func decorate_SetsTheFieldsOnce_ReplacingTheHandlers() {
        var response = HTTPResponse(headers: ["Cache-Control": "private", "access-control-allow-origin": "https://x"])
        CORSPolicy(configured: "*").decorate(&response, for: HTTPRequest(method: .get, target: "/bucket/a.jpg"))
        #expect(
            response.headers.map { $0.name } == [
                "Cache-Control", "Access-Control-Allow-Origin", "Access-Control-Expose-Headers",
            ])
        #expect(response.headers["Access-Control-Allow-Origin"] == "*")
        #expect(response.headers["Access-Control-Expose-Headers"] == CORSPolicy.exposedHeaders.joined(separator: ", "))
        var listed = HTTPResponse()
        CORSPolicy(configured: Self.origin).decorate(
            &listed, for: HTTPRequest(method: .get, target: "/bucket/a.jpg", headers: ["Origin": Self.origin]))
        #expect(listed.headers["Vary"] == "Origin")
        #expect(listed.headers["Access-Control-Allow-Origin"] == Self.origin)
    }

    /// The bucket's policy: no CORS fields for a request without `Origin` (S3, MinIO), the grant and
    /// the bucket's exposed fields (no Parse job or push ids) for one with it, `Vary: Origin` on both;
    /// a configured list the same, echoing an allowed origin only.
    @Test func bucketScope_GrantsOnlyRequestsWithAnOrigin_AndVariesOnIt() {
        let bucket = CORSPolicy(configured: "*", scope: .requestsWithOrigin)
        var plain = HTTPResponse(headers: ["Cache-Control": "private"])
        bucket.decorate(&plain, for: HTTPRequest(method: .get, target: "/bucket/a.jpg"))
        #expect(plain.headers.map { $0.name } == ["Cache-Control", "Vary"])
        #expect(plain.headers["Vary"] == "Origin")
        var cross = HTTPResponse()
        bucket.decorate(
            &cross, for: HTTPRequest(method: .get, target: "/bucket/a.jpg", headers: ["Origin": Self.origin]))
        #expect(cross.headers["Vary"] == "Origin")
        #expect(cross.headers["Access-Control-Allow-Origin"] == "*")
        #expect(
            cross.headers["Access-Control-Expose-Headers"] == CORSPolicy.bucketExposedHeaders.joined(separator: ", "))
        #expect(CORSPolicy.bucketExposedHeaders.contains("ETag"))
        #expect(CORSPolicy.bucketExposedHeaders.contains("Content-Range"))
        #expect(!CORSPolicy.bucketExposedHeaders.contains { $0.hasPrefix("X-Parse-") })
        // The mount's policy still grants every answer and exposes Parse's status ids.
        var mount = HTTPResponse()
        CORSPolicy(configured: "*").decorate(&mount, for: HTTPRequest(method: .get, target: "/parse/jobs/x"))
        #expect(mount.headers["Access-Control-Allow-Origin"] == "*")
        #expect(mount.headers["Access-Control-Expose-Headers"]?.contains("X-Parse-Job-Status-Id") == true)
        #expect(mount.headers["Vary"] == nil)
        // A configured list: the same on the bucket, an allowed origin echoed, another refused.
        let listed = CORSPolicy(configured: Self.origin, scope: .requestsWithOrigin)
        var echoed = HTTPResponse()
        listed.decorate(
            &echoed, for: HTTPRequest(method: .get, target: "/bucket/a.jpg", headers: ["Origin": Self.origin]))
        #expect(echoed.headers["Access-Control-Allow-Origin"] == Self.origin)
        var refused = HTTPResponse()
        listed.decorate(
            &refused, for: HTTPRequest(method: .get, target: "/bucket/a.jpg", headers: ["Origin": "https://x.example"]))
        #expect(refused.headers["Access-Control-Allow-Origin"] == nil)
        #expect(refused.headers["Vary"] == "Origin")
        // A preflight on the bucket is granted as before, and varies on the origin too.
        let preflight = bucket.preflight(
            HTTPRequest(
                method: .options, target: "/bucket/a.jpg",
                headers: ["Origin": Self.origin, "Access-Control-Request-Method": "GET"]))
        #expect(preflight.headers["Access-Control-Allow-Origin"] == "*")
        #expect(preflight.headers["Vary"] == "Origin")
    }

    /// Wired: the bucket's answers and errors follow the bucket's policy, the mount's its own.
    @Test func bucketAnswers_CarryCORSOnlyForAnOrigin_TheMountsAlways() throws {
        let server = try InProcessServer()
        defer { server.stop() }
        server.application.pool.shutdown()
        let miss = "/bucket/thumbnails/nosuchid00.jpg"
        let plain = server.request("GET", miss, appID: nil)
        #expect(plain.status == 404)
        #expect(plain.header("Access-Control-Allow-Origin") == nil)
        #expect(plain.header("Access-Control-Expose-Headers") == nil)
        #expect(plain.header("Vary")?.contains("Origin") == true)
        let cross = server.request("GET", miss, headers: ["Origin": Self.origin], appID: nil)
        #expect(cross.status == 404)
        #expect(cross.header("Access-Control-Allow-Origin") == "*")
        #expect(cross.header("Access-Control-Expose-Headers")?.contains("X-Parse-") == false)
        let mount = server.request("GET", "/parse/health", appID: nil)
        #expect(mount.status == 200)
        #expect(mount.header("Access-Control-Allow-Origin") == "*")
        #expect(mount.header("Access-Control-Expose-Headers")?.contains("X-Parse-Job-Status-Id") == true)
    }
}
