import Foundation
import HTTPServer
import Testing

@testable import GalleryApp

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What the Parse SDKs send, request for request (ParseSwift 4.14.2 as an app uses it, and the
/// JavaScript SDK's extras), against a real server and database: each must succeed as it does on
/// Parse Server, while what is really wrong stays 102/105.
@Suite struct ParseSDKTests {
    typealias F = ManifestFixtures

    /// `GET <path>?<query>` with the query written exactly as given (already percent-encoded).
    func get(_ server: TestServer, _ path: String, _ query: [(String, String)]) throws -> TestServer.Response {
        let text = query.map { "\($0.0)=\(TestServer.queryValue($0.1))" }.joined(separator: "&")
        return try server.request("GET", path + (text.isEmpty ? "" : "?" + text))
    }

    // MARK: 1. Array forms of order, keys, excludeKeys, include

    @Test func query_AcceptsTheSDKsJSONArrays_ForOrderKeysExcludeKeysAndInclude() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        try F.insertMany(server, count: 12)
        // Query.order([.descending("createdAt")]).limit(10).find()
        let ordered = try get(
            server, "/parse/classes/Photo",
            [
                ("limit", "10"), ("order", #"["-createdAt"]"#), ("skip", "0"), ("where", "{}"),
            ])
        #expect(ordered.status == 200, "\(ordered.text)")
        #expect(F.ids(ordered) == (3...12).reversed().map { String(format: "p%09d", $0) })
        // Two keys in an array are the comma list.
        let twoKeys = try get(server, "/parse/classes/Photo", [("order", #"["title","-createdAt"]"#), ("limit", "2")])
        let commaList = try get(server, "/parse/classes/Photo", [("order", "title,-createdAt"), ("limit", "2")])
        #expect(twoKeys.status == 200 && twoKeys.body == commaList.body, "\(twoKeys.text)")
        // select("title", "thumbnail")
        let selected = try get(server, "/parse/classes/Photo", [("keys", #"["title","thumbnail"]"#), ("limit", "1")])
        #expect(selected.status == 200, "\(selected.text)")
        let object = try #require(F.results(selected).first)
        #expect(Set(object.keys) == ["objectId", "createdAt", "updatedAt", "title"])  // no thumbnail yet: omitted
        // exclude("checksum", "tags")
        let excluded = try get(
            server, "/parse/classes/Photo", [("excludeKeys", #"["checksum","tags"]"#), ("limit", "1")])
        #expect(excluded.status == 200, "\(excluded.text)")
        let full = try #require(F.results(excluded).first)
        #expect(full["checksum"] == nil && full["tags"] == nil && full["width"] as? Int == 400)
        // An empty array names nothing.
        #expect(try get(server, "/parse/classes/Photo", [("keys", "[]"), ("limit", "1")]).status == 200)
        // What is really wrong stays 102.
        for (name, value) in [
            ("order", #"["nosuchfield"]"#), ("order", "[1]"), ("keys", #"["title""#), ("excludeKeys", #"[["a"]]"#),
            ("include", #"["title"]"#), ("keys", #"{"a":1}"#),
        ] {
            let r = try get(server, "/parse/classes/Photo", [(name, value)])
            #expect(r.status == 400 && F.code(r) == 102, "\(name)=\(value): \(r.text)")
        }
    }

    @Test func include_AcceptsTheSDKsArray_OnFindAndFetch() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let photos = try server.insertPhotos(2)
        let gallery = try server.createGallery("Trip")
        let item = try server.addedItem(gallery: gallery, photo: photos[0])
        // Query<GalleryItem>().include("photo").find()
        let found = try get(server, "/parse/classes/GalleryItem", [("include", #"["photo"]"#), ("where", "{}")])
        #expect(found.status == 200, "\(found.text)")
        let photo = try #require(F.results(found).first?["photo"] as? [String: Any])
        #expect(photo["__type"] as? String == "Object" && photo["width"] as? Int == 400)
        // item.fetch(includeKeys: ["photo"])
        let fetched = try get(server, "/parse/classes/GalleryItem/\(item)", [("include", #"["photo"]"#)])
        #expect(fetched.status == 200, "\(fetched.text)")
        #expect((fetched.json["photo"] as? [String: Any])?["filename"] as? String == "row-\(photos[0]).jpg")
        // Gallery.fetch(includeKeys: ["*"]) sends include=["*"].
        let all = try get(server, "/parse/classes/Gallery/\(gallery)", [("include", #"["*"]"#)])
        #expect(all.status == 200, "\(all.text)")
        #expect((all.json["coverPhoto"] as? [String: Any])?["objectId"] as? String == photos[0])
    }

    @Test func sortByTextScore_SendsScoreAsArrays() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        try F.insert(
            server,
            [
                F.Row(id: "aaaaaaaaa1", createdAt: Date(), title: "red flower red"),
                F.Row(id: "aaaaaaaaa2", createdAt: Date(), title: "flower"),
                F.Row(id: "aaaaaaaaa3", createdAt: Date(), title: "tree"),
            ])
        // Query.matchesText(key: "title", text: "flower").sortByTextScore()
        let r = try get(
            server, "/parse/classes/Photo",
            [
                ("order", #"["$score"]"#), ("keys", #"["$score"]"#),
                ("where", #"{"title":{"$text":{"$search":{"$term":"flower"}}}}"#),
            ])
        #expect(r.status == 200, "\(r.text)")
        #expect(Set(F.ids(r)) == ["aaaaaaaaa1", "aaaaaaaaa2"])
        #expect(F.results(r).allSatisfy { $0["score"] is Double })
    }

    @Test func methodGetBody_AcceptsArrays() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        try F.insertMany(server, count: 5)
        // What ParseSwift sends for a find whose URL would be too long: the same parameters in a body.
        let r = try server.json(
            "POST", "/parse/classes/Photo",
            [
                "_method": "GET", "where": [String: Any](), "order": ["-createdAt"], "keys": ["title"],
                "excludeKeys": ["checksum"], "limit": 2, "skip": 0,
            ])
        #expect(r.status == 200, "\(r.text)")
        #expect(F.ids(r) == ["p000000005", "p000000004"])
        #expect(F.results(r).first?["title"] as? String == "bulk 5" && F.results(r).first?["width"] == nil)
        let bad = try server.json("POST", "/parse/classes/Photo", ["_method": "GET", "order": [1]])
        #expect(bad.status == 400 && F.code(bad) == 102, "\(bad.text)")
    }

    // MARK: 2. \Q…\E in $regex

    @Test func regex_QuotedLiterals_FromHasPrefixHasSuffixAndContainsString() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let now = Date()
        try F.insert(
            server,
            [
                F.Row(id: "aaaaaaaaa1", createdAt: now, title: "Flower field"),
                F.Row(id: "aaaaaaaaa2", createdAt: now.addingTimeInterval(-1), title: "Red Flower"),
                F.Row(id: "aaaaaaaaa3", createdAt: now.addingTimeInterval(-2), title: "A flower.jpg (1)"),
                F.Row(id: "aaaaaaaaa4", createdAt: now.addingTimeInterval(-3), title: "Tree"),
            ])
        func find(_ condition: [String: Any]) throws -> [String] {
            let r = try get(server, "/parse/classes/Photo", [("where", F.json(["title": condition]))])
            #expect(r.status == 200, "\(condition): \(r.text)")
            return F.ids(r)
        }
        // hasPrefix, hasSuffix, containsString (and their case-insensitive forms).
        #expect(try find(["$regex": "^\\QFlower\\E"]) == ["aaaaaaaaa1"])
        #expect(try find(["$regex": "\\QFlower\\E$"]) == ["aaaaaaaaa2"])
        #expect(try find(["$regex": "\\QFlower\\E"]) == ["aaaaaaaaa1", "aaaaaaaaa2"])
        #expect(try find(["$regex": "\\Qflower\\E", "$options": "i"]) == ["aaaaaaaaa1", "aaaaaaaaa2", "aaaaaaaaa3"])
        // Metacharacters inside the quotes are literal; \E may be left off at the end.
        #expect(try find(["$regex": "\\Q.jpg (1)\\E$"]) == ["aaaaaaaaa3"])
        #expect(try find(["$regex": "\\Q.jpg (1)"]) == ["aaaaaaaaa3"])
        #expect(try find(["$regex": "^\\QA flower.jpg (\\E\\d"]) == ["aaaaaaaaa3"])
        #expect(try find(["$regex": "\\Q(\\E"]) == ["aaaaaaaaa3"])
        // Still strict about what is really wrong.
        let r = try get(server, "/parse/classes/Photo", [("where", F.json(["title": ["$regex": "\\Qa\\E\\1"]]))])
        #expect(r.status == 400 && F.code(r) == 102, "\(r.text)")
    }

    @Test func regex_QuotedPrefix_UsesThePrefixIndex() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        try F.insertMany(server, count: 5000)
        try server.application.pool.execute("analyze photos")
        let query = try ParseQuery.find(
            .photo,
            items: [
                ("where", F.json(["title": ["$regex": "^\\QFlower\\E"]])), ("limit", "10"), ("order", #"["title"]"#),
            ])
        let select = try #require(ParseSQLCompiler.compile(query).select)
        #expect(select.binds.prefix(2) == [.text("Flower"), .text("Flowes")])
        let plan = try server.application.pool.transaction { connection -> String in
            try connection.execute("set local plan_cache_mode = force_generic_plan")
            try connection.execute("prepare prefix_probe as " + select.sql)
            let rows = try connection.query("explain execute prefix_probe('Flower', 'Flowes', 10, 0)")
            try connection.execute("deallocate prefix_probe")
            return try rows.map { try $0.decode(String.self, 0) }.joined(separator: "\n")
        }
        #expect(plan.contains("photos_title_prefix_idx"), "\(plan)")
        #expect(plan.contains("~>=~"), "\(plan)")
    }
}
