import Foundation
import Testing

@testable import GalleryApp

/// Keys, hostile query input and compression on the manifest.
@Suite struct ManifestSecurityTests {
    typealias F = ManifestFixtures

    @Test func keys_MissingOrWrongApplicationId_Is403Unauthorized() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        try F.insertMany(server, count: 3)
        for appID in [nil, "", "gallerx", "galler", "galleryy", "GALLERY", "gallery\u{0}"] as [String?] {
            let r = try server.request("GET", "/parse/classes/Photo", appID: appID)
            #expect(r.status == 403, "\(appID ?? "nil")")
            #expect(r.text == #"{"error":"unauthorized"}"#, "\(appID ?? "nil")")
        }
        for (method, path) in [
            ("GET", "/parse/classes/Photo/p000000001"), ("PUT", "/parse/classes/Photo/p000000001"),
            ("DELETE", "/parse/classes/Photo/p000000001"), ("POST", "/parse/batch"),
        ] {
            let r = try server.request(
                method, path, body: method == "GET" || method == "DELETE" ? nil : Data("{}".utf8), appID: "nope")
            #expect(r.status == 403, "\(method) \(path)")
        }
        #expect(
            try server.application.pool.query("select deleted_at from photos where object_id = 'p000000001'")
                .first!.decode(Date?.self, 0) == nil)
        #expect(try server.request("GET", "/parse/classes/Photo").status == 200)
    }

    @Test func keys_RESTKeyIsRequired_WhenConfigured_AndTheMasterKeyStandsIn() throws {
        let server = try TestServer(workers: 0) { $0.restKey = "rest-key-0123456789" }
        defer { server.stop() }
        try F.insertMany(server, count: 3)
        let cases: [([String: String], Int)] = [
            ([:], 403),
            (["X-Parse-REST-API-Key": "wrong"], 403),
            (["X-Parse-REST-API-Key": "rest-key-012345678"], 403),
            (["X-Parse-REST-API-Key": "rest-key-01234567899"], 403),
            (["X-Parse-REST-API-Key": "rest-key-0123456789"], 200),
            (["X-Parse-Master-Key": TestServer.masterKey], 200),
            (["X-Parse-Master-Key": "wrong-master-key-0123456789"], 403),
        ]
        for (headers, status) in cases {
            let r = try server.request("GET", "/parse/classes/Photo", headers: headers, anonymous: true)
            #expect(r.status == status, "\(headers)")
            if status == 403 { #expect(r.json["error"] as? String == "unauthorized") }
            // The REST key lets a request in; without a session it reads nothing (the rows are ownerless).
            if status == 200 { #expect(F.ids(r).count == (headers["X-Parse-Master-Key"] == nil ? 0 : 3)) }
        }
        // The REST key with a wrong application id is still refused.
        let wrongApp = try server.request(
            "GET", "/parse/classes/Photo", headers: ["X-Parse-REST-API-Key": "rest-key-0123456789"], appID: "x")
        #expect(wrongApp.status == 403)
        // Purging needs the master key even with the REST key.
        let purge = try server.request(
            "DELETE", "/parse/purge/Photo", headers: ["X-Parse-REST-API-Key": "rest-key-0123456789"])
        #expect(purge.status == 403)
        #expect(KeyChecker.constantTimeEquals(Array("abc".utf8), Array("abc".utf8)))
        #expect(!KeyChecker.constantTimeEquals(Array("abc".utf8), Array("abd".utf8)))
        #expect(!KeyChecker.constantTimeEquals(Array("abc".utf8), Array("abc\u{0}".utf8)))
        #expect(!KeyChecker.constantTimeEquals([], Array("a".utf8)))
        // A presented key (a String) against a configured one, compared in place.
        #expect(KeyChecker.constantTimeEquals("abc", Array("abc".utf8)))
        #expect(
            KeyChecker.constantTimeEquals(
                "a key longer than fifteen bytes é", Array("a key longer than fifteen bytes é".utf8)))
        #expect(!KeyChecker.constantTimeEquals("abd", Array("abc".utf8)))
        #expect(!KeyChecker.constantTimeEquals("abc\u{0}", Array("abc".utf8)))
        #expect(!KeyChecker.constantTimeEquals("", Array("a".utf8)))
        #expect(!KeyChecker.constantTimeEquals("é", Array("e".utf8)))
    }

    /// Checks that the photos are all still there.
    static func expectIntact(_ server: TestServer, count: Int64, _ context: String) throws {
        #expect(try F.tableCount(server) == count, "\(context)")
        #expect(try F.find(server, ["count": "1", "limit": "0"]).json["count"] as? Int == Int(count), "\(context)")
        #expect(
            try F.find(server, ["count": "1", "limit": "0", "where": F.json(["width": ["$gt": 0]])]).json["count"]
                as? Int == Int(count))
        #expect(
            try server.application.pool.query("select n from row_counts where name = 'photos_live'").first!.decode(
                Int64.self, 0) == count)
    }

    @Test func hostileWhereAndOrder_Are400_AndLeaveTheDataAlone() throws {
        let server = try TestServer(workers: 0, listening: true)
        defer { server.stop() }
        try F.insertMany(server, count: 25)
        let drop = "'; drop table photos; --"
        var deep = "1"
        for _ in 0..<60 { deep = #"{"$or":[{"title":"# + deep + "}]}" }
        let deepArrays = String(repeating: "[", count: 1000) + String(repeating: "]", count: 1000)
        let rawCases: [(String, String)] = [
            ("where", drop),
            ("where", #"{"title":"x"}; drop table photos; --"#),
            ("where", #"{"title\"; drop table photos; --":"x"}"#),
            ("where", #"{"title":{"$regex":"'); drop table photos; --"}}"#),
            ("where", #"{"width":{"$gt":"0); drop table photos; --"}}"#),
            ("where", #"{"$where":"sleep(10)"}"#),
            ("where", #"{"createdAt":{"$lt":{"__type":"Date","iso":"2020-01-01'; drop table photos; --"}}}"#),
            ("where", deep),
            ("where", deepArrays),
            ("where", #"{"title":"\ud800"}"#),
            ("where", "{\"title\":\"a\u{0}\"}"),
            ("order", "createdAt; drop table photos; --"),
            ("order", "-createdAt,(select 1)"),
            ("order", "createdAt desc"),
            ("order", "title COLLATE \"C\""),
            ("keys", "title from photos; drop table photos; --"),
            ("excludeKeys", "*"),
            ("include", "photo; drop table photos"),
            ("limit", "1; drop table photos"),
            ("limit", "99999999999999999999999"),
            ("skip", "1e3"),
            ("count", "1; drop table photos"),
        ]
        for (name, value) in rawCases {
            let r = try F.find(server, [name: value])
            #expect(r.status == 400, "\(name)=\(value.prefix(80)): \(r.status) \(r.text.prefix(200))")
            #expect([102, 107].contains(F.code(r) ?? 0), "\(name)=\(value.prefix(80)): \(r.text.prefix(200))")
            try Self.expectIntact(server, count: 25, "\(name)=\(value.prefix(80))")
        }
        // Hostile text inside a valid value is just data.
        let literal = try F.find(server, ["where": F.json(["title": drop])])
        #expect(literal.status == 200 && F.ids(literal).isEmpty)
        let put = try server.json("PUT", "/parse/classes/Photo/p000000001", ["title": drop, "tags": [drop]])
        #expect(put.status == 200)
        #expect(F.ids(try F.find(server, ["where": F.json(["title": drop, "tags": drop])])) == ["p000000001"])
        try Self.expectIntact(server, count: 25, "title set to SQL")

        // Invalid percent-encoding and invalid UTF-8 in the query string: 102.
        // (Over a raw socket: URL clients would re-encode a malformed `%`.)
        for query in [
            "where=%FF%FE", "where=%7B%22title%22%3A%22%C3%28%22%7D", "where=%ZZ", "where=%7", "order=%80", "%FF=1",
            "where=%ED%A0%80", "where=%C0%AF",
        ] {
            let request =
                "GET /parse/classes/Photo?\(query) HTTP/1.1\r\nHost: x\r\nX-Parse-Application-Id: gallery\r\nX-Parse-Master-Key: \(TestServer.masterKey)\r\nConnection: close\r\n\r\n"
            let r = try F.rawExchange(port: server.application.port, Array(request.utf8))
            let body = (try? JSONSerialization.jsonObject(with: Data(r.body))) as? [String: Any]
            #expect(r.status == 400, "\(query): \(String(decoding: r.body, as: UTF8.self))")
            #expect(body?["code"] as? Int == 102, "\(query): \(String(decoding: r.body, as: UTF8.self))")
        }
        try Self.expectIntact(server, count: 25, "percent-encoding")

        // A megabyte of where never reaches the database: the request line limit answers 414.
        let huge = "where=" + String(repeating: "%41", count: 350_000)
        let request =
            "GET /parse/classes/Photo?\(huge) HTTP/1.1\r\nHost: x\r\nX-Parse-Application-Id: gallery\r\nX-Parse-Master-Key: \(TestServer.masterKey)\r\nConnection: close\r\n\r\n"
        let answer = try F.rawExchange(port: server.application.port, Array(request.utf8))
        #expect(answer.status == 414)
        // A long (but acceptable) URL with a 6 KB value works; a megabyte title in a body is refused.
        let long = try F.find(server, ["where": F.json(["title": String(repeating: "é", count: 1000)])])
        #expect(long.status == 200)
        let bigTitle = try server.json(
            "PUT", "/parse/classes/Photo/p000000002", ["title": String(repeating: "a", count: 1_000_000)])
        #expect(bigTitle.status == 400 || bigTitle.status == 413)
        #expect(try server.request("GET", "/parse/classes/Photo/p000000002").json["title"] as? String == "bulk 2")
        try Self.expectIntact(server, count: 25, "huge values")
    }

    @Test func manifest_IsGzipped_WhenTheClientAcceptsIt() throws {
        let server = try TestServer(workers: 0, listening: true)
        defer { server.stop() }
        try F.insertMany(server, count: 40)
        func get(_ acceptEncoding: String?) throws -> (status: Int, headers: [String: String], body: [UInt8]) {
            var request =
                "GET /parse/classes/Photo?limit=40 HTTP/1.1\r\nHost: x\r\nX-Parse-Application-Id: gallery\r\nX-Parse-Master-Key: \(TestServer.masterKey)\r\nConnection: close\r\n"
            if let acceptEncoding { request += "Accept-Encoding: \(acceptEncoding)\r\n" }
            return try F.rawExchange(port: server.application.port, Array((request + "\r\n").utf8))
        }
        let plain = try get(nil)
        #expect(plain.status == 200 && plain.headers["content-encoding"] == nil)
        let plainJSON = try #require(try JSONSerialization.jsonObject(with: Data(plain.body)) as? [String: Any])
        #expect((plainJSON["results"] as? [Any])?.count == 40)

        let gzipped = try get("gzip, deflate")
        #expect(gzipped.status == 200)
        #expect(gzipped.headers["content-encoding"] == "gzip")
        #expect(gzipped.headers["vary"]?.lowercased().contains("accept-encoding") == true)
        #expect(gzipped.headers["content-type"]?.hasPrefix("application/json") == true)
        #expect(gzipped.body.count < plain.body.count / 3)
        #expect(Array(gzipped.body.prefix(2)) == [0x1F, 0x8B])
        let inflated = try F.gunzip(gzipped.body)
        #expect(inflated == Data(plain.body))

        #expect(try get("gzip;q=0").headers["content-encoding"] == nil)
        #expect(try get("br").headers["content-encoding"] == nil)
    }
}
