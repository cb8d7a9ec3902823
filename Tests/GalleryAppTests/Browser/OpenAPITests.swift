import Foundation
import Testing

@testable import GalleryApp

/// `/openapi.json` describes exactly the routes the server has.
@Suite(.serialized) struct OpenAPITests {
    /// `(METHOD, /path/{param})` pairs from a router pattern (`:name` and `*name` become `{name}`).
    static func openAPIPath(_ pattern: String) -> String {
        pattern.split(separator: "/", omittingEmptySubsequences: false).map { segment in
            segment.hasPrefix(":") || segment.hasPrefix("*") ? "{\(segment.dropFirst())}" : String(segment)
        }.joined(separator: "/")
    }

    @Test func description_MatchesTheRegisteredRoutes_BothWays() throws {
        let server = try InProcessServer()
        defer { server.stop() }
        let r = server.request("GET", "/openapi.json", appID: nil)
        #expect(r.status == 200)
        #expect(r.header("Content-Type")?.hasPrefix("application/json") == true)
        let document = r.json
        #expect(document["openapi"] as? String == "3.1.0")
        let paths = try #require(document["paths"] as? [String: [String: Any]])
        let methods: Set<String> = ["get", "put", "post", "delete", "patch", "head", "options", "trace"]
        var described = Set<String>()
        for (path, item) in paths {
            for key in item.keys where methods.contains(key) { described.insert("\(key.uppercased()) \(path)") }
        }
        // Preflight OPTIONS below /parse and /bucket is CORS plumbing, described in info.description.
        let routed = Set(
            server.application.router.routes.filter { $0.method.rawValue != "OPTIONS" }
                .map { "\($0.method.rawValue) \(Self.openAPIPath($0.pattern))" })
        #expect(routed.count > 15)
        #expect(routed.subtracting(described).sorted() == [], "routes the description lacks")
        #expect(described.subtracting(routed).sorted() == [], "described paths with no route")
        // Every path parameter is declared, on the path or on each operation.
        for (path, item) in paths {
            let names = path.split(separator: "/").filter { $0.hasPrefix("{") }.map {
                String($0.dropFirst().dropLast())
            }
            let shared = (item["parameters"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
            for (key, operation) in item where methods.contains(key) {
                let own = ((operation as? [String: Any])?["parameters"] as? [[String: Any]] ?? []).compactMap {
                    $0["name"] as? String
                }
                for name in names { #expect(shared.contains(name) || own.contains(name), "\(key) \(path) {\(name)}") }
            }
        }
        // Every $ref resolves.
        let text = r.text
        let components = try #require(document["components"] as? [String: [String: Any]])
        let regex = try NSRegularExpression(pattern: "\"#/components/(\\w+)/(\\w+)\"")
        for match in regex.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
            let kind = String(text[Range(match.range(at: 1), in: text)!])
            let name = String(text[Range(match.range(at: 2), in: text)!])
            #expect(components[kind]?[name] != nil, "#/components/\(kind)/\(name)")
        }
    }

    @Test func page_IsServed_WithItsModules_AndConfigWithoutKeys() throws {
        let server = try InProcessServer { $0.restKey = "rest-key-123456" }
        defer { server.stop() }
        let page = server.request("GET", "/", appID: nil)
        #expect(page.status == 200)
        #expect(page.header("Content-Type")?.hasPrefix("text/html") == true)
        #expect(page.text.contains("type=\"module\""))
        let module = server.request("GET", "/web/app.js", appID: nil)
        #expect(module.status == 200)
        #expect(module.header("Content-Type")?.hasPrefix("text/javascript") == true)
        let etag = try #require(module.header("ETag"))
        #expect(server.request("GET", "/web/app.js", headers: ["If-None-Match": etag], appID: nil).status == 304)
        let config = server.request("GET", "/web/config.json", appID: nil)
        #expect(config.json["appId"] as? String == "gallery")
        #expect(config.json["restKeyRequired"] as? Bool == true)
        #expect(!config.text.contains(TestServer.masterKey))
        #expect(!config.text.contains("rest-key-123456"))
        for bad in ["/web/../Package.swift", "/web/%2e%2e/Package.swift", "/web/.hidden", "/web/nope.js", "/web/"] {
            #expect(server.request("GET", bad, appID: nil).status == 404, "\(bad)")
        }
        #expect(server.request("GET", "/health", appID: nil).status == 200)
    }
}
