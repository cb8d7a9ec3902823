import Foundation
import HTTPServer
import Testing

@testable import GalleryApp

/// Parse SDKs' `POST` with `"_method"` in the body (queries whose `where` will not fit a URL) and
/// the JavaScript SDK's keys in the body, against a real server and database.
@Suite struct ParseMethodOverrideTests {
    typealias F = ManifestFixtures

    @Test func postWithMethodGet_FindsLikeGet_WithAWhereTooLargeForTheURL() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        try F.insertMany(server, count: 30)
        // 1000 ids in $in (the most allowed): about 13 KB of where, over the 8 KiB request line.
        let wanted = ["p000000003", "p000000017", "p000000029"]
        let ids = wanted + (0..<997).map { "z" + String(format: "%09d", $0) }
        let condition: [String: Any] = ["objectId": ["$in": ids]]
        let viaURL = try F.find(server, ["where": F.json(condition)])
        #expect(viaURL.status == 414)
        let r = try server.json(
            "POST", "/parse/classes/Photo",
            [
                "_method": "GET", "where": condition, "order": "-createdAt", "limit": 2, "count": 1,
            ])
        #expect(r.status == 200, "\(r.text.prefix(300))")
        #expect(F.ids(r) == ["p000000029", "p000000017"])
        #expect(r.json["count"] as? Int == 3)
        // The same small query both ways gives the same bytes.
        let small: [String: Any] = ["byteSize": ["$gte": 1000]]
        let get = try F.find(server, ["where": F.json(small), "limit": "5", "keys": "title"])
        let post = try server.json(
            "POST", "/parse/classes/Photo", ["_method": "GET", "where": small, "limit": 5, "keys": "title"])
        #expect(get.status == 200 && post.status == 200)
        #expect(get.body == post.body)
        // The URL's parameters win over the body's, as in Parse Server.
        let merged = try server.json("POST", "/parse/classes/Photo?limit=1", ["_method": "GET", "limit": 4])
        #expect(F.ids(merged).count == 1)
    }

    @Test func postWithMethodOverride_GetsUpdatesAndDeletesAnObject() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let id = try server.uploadPhoto(try TestJPEG.make(width: 40, height: 30, seed: 501), title: "before")
        let got = try server.json("POST", "/parse/classes/Photo/\(id)", ["_method": "GET", "keys": "title"])
        #expect(got.status == 200)
        #expect(got.json["title"] as? String == "before")
        #expect(got.json["status"] == nil)
        let put = try server.json("POST", "/parse/classes/Photo/\(id)", ["_method": "PUT", "title": "after"])
        #expect(put.status == 200, "\(put.text)")
        #expect(try server.request("GET", "/parse/classes/Photo/\(id)").json["title"] as? String == "after")
        let deleted = try server.json("POST", "/parse/classes/Photo/\(id)", ["_method": "DELETE"])
        #expect(deleted.status == 200)
        // Deleting moves the photo to Recently Deleted.
        #expect(try server.request("GET", "/parse/classes/Photo/\(id)").json["deletedAt"] != nil)
        // Without an override a POST to an object is a Parse error, not a create.
        let plain = try server.json("POST", "/parse/classes/Photo/\(id)", ["title": "x"])
        #expect(plain.status == 400)
        #expect(F.code(plain) == 107)
        let unknown = try server.json("POST", "/parse/classes/Photo", ["_method": "PATCH"])
        #expect(unknown.status == 400)
        let notString = try server.json("POST", "/parse/classes/Photo", ["_method": 1])
        #expect(notString.status == 400)
    }

    @Test func bodyKeys_StandInForHeaders_OnlyWhenTheHeadersHaveNone() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        try F.insertMany(server, count: 3)
        func post(_ object: [String: Any], appIDHeader: String? = nil) throws -> TestServer.Response {
            // text/plain, as the JavaScript SDK sends it to avoid a CORS preflight.
            try server.request(
                "POST", "/parse/classes/Photo", body: try JSONSerialization.data(withJSONObject: object),
                headers: ["Content-Type": "text/plain"], appID: appIDHeader)
        }
        let ok = try post([
            "_method": "GET", "_ApplicationId": TestServer.appID, "_MasterKey": TestServer.masterKey,
            "_ClientVersion": "js5.3.0", "_InstallationId": "abc", "limit": 10,
        ])
        #expect(ok.status == 200, "\(ok.text)")
        #expect(F.ids(ok).count == 3)
        #expect(try post(["_method": "GET", "_ApplicationId": "someone-else"]).status == 403)
        #expect(try post(["_method": "GET"]).status == 403)
        // Without keys, even an unsupported override is 403 first: nothing is told about the body.
        #expect(try post(["_method": "PUT", "title": "x"]).status == 403)
        // The header decides when present: a right body key does not rescue a wrong header.
        #expect(try post(["_method": "GET", "_ApplicationId": TestServer.appID], appIDHeader: "wrong").status == 403)
        // A create from the JavaScript SDK: keys in the body, and they are not stored as fields.
        let file = try server.request(
            "POST", "/parse/files/js.jpg", body: Data(try TestJPEG.make(width: 24, height: 24, seed: 502)),
            headers: ["Content-Type": "image/jpeg"])
        let name = try #require(file.json["name"] as? String)
        let created = try post([
            "_ApplicationId": TestServer.appID, "_MasterKey": TestServer.masterKey, "_ClientVersion": "js5.3.0",
            "original": ["__type": "File", "name": name], "title": "from js",
        ])
        #expect(created.status == 201, "\(created.text)")
        let id = try #require(created.json["objectId"] as? String)
        let fetched = try server.request("GET", "/parse/classes/Photo/\(id)")
        #expect(fetched.json["title"] as? String == "from js")
        #expect(fetched.json["_ClientVersion"] == nil)
        // A malformed body without keys is 403 before it is a JSON error.
        let garbage = try server.request(
            "POST", "/parse/classes/Photo", body: Data(#"{"_method": "GET", "#.utf8),
            headers: ["Content-Type": "text/plain"],
            appID: nil)
        #expect(garbage.status == 403)
        let garbageWithKey = try server.request(
            "POST", "/parse/classes/Photo", body: Data(#"{"_method": "GET", "#.utf8))
        #expect(garbageWithKey.status == 400)
    }

    @Test func bodyMasterKey_GrantsMasterAccess_AndBookkeepingIsStripped() throws {
        let object: [String: Any] = [
            "_method": "get", "_ApplicationId": TestServer.appID, "_MasterKey": TestServer.masterKey, "_context": [:],
            "where": ["title": "a"], "limit": 3, "_custom": 1,
        ]
        let body = [UInt8](try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]))
        let override = try #require(try ParseMethodOverride.parse(body, maxDepth: 16))
        #expect(override.method == "GET")
        let keys = KeyChecker(appID: TestServer.appID, restKey: nil, masterKey: TestServer.masterKey)
        let request = HTTPRequest(method: .post, target: "/parse/classes/Photo")
        #expect(keys.access(request, bodyKeys: override.keys) == .master)
        var wrong = override.keys
        wrong.masterKey = "not-it"
        #expect(keys.access(request, bodyKeys: wrong) == .client)
        // Only the SDK's own members go; an unknown underscore field stays for validation to refuse.
        #expect(String(decoding: override.body, as: UTF8.self) == #"{"_custom":1,"limit":3,"where":{"title":"a"}}"#)
        #expect(override.queryItems.map(\.name) == ["_custom", "limit", "where"])
        #expect(override.queryItems.first { $0.name == "where" }?.value == #"{"title":"a"}"#)
        // An ordinary create body is not parsed twice.
        #expect(try ParseMethodOverride.parse(Array(#"{"title":"_x"}"#.utf8), maxDepth: 16) == nil)
    }
}
