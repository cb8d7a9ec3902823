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
    private func get(_ server: TestServer, _ path: String, _ query: [(String, String)]) throws -> TestServer.Response {
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

    // MARK: 3. transaction in /batch

    @Test func batch_AcceptsTransactionFalse_AndRunsTransactionTrueAllOrNothing() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let photos = try server.insertPhotos(2)
        // saveAll(): "transaction": false, as every ParseSwift batch sends it.
        let plain = try server.json(
            "POST", "/parse/batch",
            [
                "requests": [
                    ["method": "PUT", "path": "/parse/classes/Photo/\(photos[0])", "body": ["title": "one"]],
                    ["method": "PUT", "path": "/parse/classes/Photo/\(photos[1])", "body": ["title": "two"]],
                ], "transaction": false,
            ])
        #expect(plain.status == 200, "\(plain.text)")
        #expect((plain.jsonArray as? [[String: Any]])?.allSatisfy { $0["success"] != nil } == true)
        // saveAll(transaction: true) with every request fine: all applied.
        let good = try server.json(
            "POST", "/parse/batch",
            [
                "requests": [
                    ["method": "PUT", "path": "/parse/classes/Photo/\(photos[0])", "body": ["title": "uno"]],
                    ["method": "POST", "path": "/parse/classes/Gallery", "body": ["name": "Kept"]],
                ], "transaction": true,
            ])
        #expect(good.status == 200, "\(good.text)")
        #expect((good.jsonArray as? [[String: Any]])?.count == 2)
        #expect(try server.request("GET", "/parse/classes/Photo/\(photos[0])").json["title"] as? String == "uno")
        // One failing request: nothing is kept, and the answer is that request's Parse error.
        let bad = try server.json(
            "POST", "/parse/batch",
            [
                "requests": [
                    ["method": "PUT", "path": "/parse/classes/Photo/\(photos[0])", "body": ["title": "lost"]],
                    ["method": "POST", "path": "/parse/classes/Gallery", "body": ["name": "Lost"]],
                    ["method": "PUT", "path": "/parse/classes/Photo/\(photos[1])", "body": ["width": 1]],
                ], "transaction": true,
            ])
        #expect(bad.status == 400, "\(bad.text)")
        #expect(F.code(bad) == 105, "\(bad.text)")
        #expect(try server.request("GET", "/parse/classes/Photo/\(photos[0])").json["title"] as? String == "uno")
        let galleries = try server.application.pool.query("select name from galleries order by name").map {
            try $0.decode(String.self, 0)
        }
        #expect(galleries == ["Kept"])
        // deleteAll(transaction: true) of an object that does not exist: 101, the others stay.
        let missing = try server.json(
            "POST", "/parse/batch",
            [
                "requests": [
                    ["method": "DELETE", "path": "/parse/classes/Photo/\(photos[0])"],
                    ["method": "DELETE", "path": "/parse/classes/Photo/zzzzzzzzzz"],
                ], "transaction": true,
            ])
        #expect(missing.status == 404 && F.code(missing) == 101, "\(missing.text)")
        #expect(try server.request("GET", "/parse/classes/Photo/\(photos[0])").json["deletedAt"] == nil)
        // DELETE in a transactional batch only trashes, as the route does (idempotent): rolled back
        // with a failing batch, the photo stays live; a trashed photo deleted again stays in the
        // trash with its original (deleting for good is DELETE /purge/..., never a batch path).
        let jpeg = try TestJPEG.make(width: 40, height: 30, seed: 77)
        let uploaded = try server.uploadPhoto(jpeg, name: "kept.jpg")
        let original = try server.application.pool.query(
            "select original_key from photos where object_id = $1", [uploaded]
        )
        .first!.decode(String.self, 0)
        let failing = try server.json(
            "POST", "/parse/batch",
            [
                "requests": [
                    ["method": "DELETE", "path": "/parse/classes/Photo/\(uploaded)"],
                    ["method": "PUT", "path": "/parse/classes/Photo/\(photos[1])", "body": ["width": 1]],
                ], "transaction": true,
            ])
        #expect(F.code(failing) == 105, "\(failing.text)")
        #expect(
            try server.scalar(
                "select count(*)::bigint from photos where object_id = $1 and deleted_at is null", [uploaded]) == 1)
        #expect(try server.request("DELETE", "/parse/classes/Photo/\(uploaded)").status == 200)  // to the trash
        let again = try server.json(
            "POST", "/parse/batch",
            [
                "requests": [
                    ["method": "DELETE", "path": "/parse/classes/Photo/\(uploaded)"]
                ], "transaction": true,
            ])
        #expect(again.status == 200, "\(again.text)")
        #expect(
            try server.scalar(
                "select count(*)::bigint from photos where object_id = $1 and deleted_at is not null", [uploaded]) == 1)
        #expect(try server.request("GET", "/bucket/" + original).status == 200)
        // The pool is whole again afterwards: every connection came back (a timer's statement, such
        // as the request-id cleanup, may hold one for a moment).
        var inUse = server.application.pool.stats.inUse
        for _ in 0..<100 where inUse != 0 {
            Thread.sleep(forTimeInterval: 0.02)
            inUse = server.application.pool.stats.inUse
        }
        #expect(inUse == 0)
        // Still strict: a non-boolean transaction, or another unknown member.
        let notBool = try server.json("POST", "/parse/batch", ["requests": [[String: Any]](), "transaction": "yes"])
        #expect(notBool.status == 400 && F.code(notBool) == 107, "\(notBool.text)")
        let unknown = try server.json("POST", "/parse/batch", ["requests": [[String: Any]](), "atomic": true])
        #expect(unknown.status == 400 && F.code(unknown) == 105, "\(unknown.text)")
    }

    // MARK: 4. Saving a fetched object

    /// What ParseSwift's `save()` sends for an object it fetched: every field it holds but
    /// objectId, createdAt and updatedAt.
    private func savedBack(_ fetched: [String: Any], _ changes: [String: Any]) -> [String: Any] {
        var body = fetched
        for key in ["objectId", "createdAt", "updatedAt"] { body[key] = nil }
        for (key, value) in changes { body[key] = value }
        return body
    }

    @Test func save_OfAFetchedPhoto_SendsServerFieldsBack_AndSucceeds() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        // takenAt with microseconds: the client holds milliseconds, and that counts as unchanged.
        try F.insert(
            server,
            [
                F.Row(
                    id: "aaaaaaaaa1", createdAt: Date(), title: "before", tags: ["x"],
                    takenAt: Date(timeIntervalSince1970: 1_600_000_000.123456))
            ])
        let path = "/parse/classes/Photo/aaaaaaaaa1"
        let fetched = try server.request("GET", path).json
        #expect(fetched["aspectRatio"] != nil && fetched["original"] != nil && fetched["takenAt"] != nil)
        let saved = try server.json("PUT", path, savedBack(fetched, ["title": "after"]))
        #expect(saved.status == 200, "\(saved.text)")
        #expect(try server.request("GET", path).json["title"] as? String == "after")
        // Sent back with nothing changed at all: a no-op that answers updatedAt.
        let again = try server.json("PUT", path, savedBack(try server.request("GET", path).json, [:]))
        #expect(again.status == 200, "\(again.text)")
        // A real change to a server-owned field is still 105, and nothing is written.
        for change: [String: Any] in [
            ["aspectRatio": 2.5], ["byteSize": 1], ["status": "failed"], ["width": NSNull()],
            ["original": ["__type": "File", "name": "other.jpg", "url": "http://x/other.jpg"]],
            ["takenAt": F.date(Date(timeIntervalSince1970: 1_600_000_001))],
        ] {
            let r = try server.json("PUT", path, savedBack(fetched, change.merging(["title": "changed"]) { a, _ in a }))
            #expect(r.status == 400 && F.code(r) == 105, "\(change): \(r.text)")
        }
        #expect(try server.request("GET", path).json["title"] as? String == "after")
        // A wrongly typed server field is no value it can hold: 105 as before; an operation on it too.
        #expect(F.code(try server.json("PUT", path, ["width": "400"])) == 105)
        #expect(F.code(try server.json("PUT", path, ["width": ["__op": "Increment", "amount": 1]])) == 105)
    }

    @Test func save_OfAFetchedGalleryAndItem_SendsServerFieldsBack_AndSucceeds() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let photos = try server.insertPhotos(2)
        let gallery = try server.createGallery("Trip")
        let item = try server.addedItem(gallery: gallery, photo: photos[0])
        _ = try server.addedItem(gallery: gallery, photo: photos[1])
        let galleryPath = "/parse/classes/Gallery/\(gallery)"
        let fetchedGallery = try server.request("GET", galleryPath).json
        #expect(fetchedGallery["photoCount"] as? Int == 2 && fetchedGallery["coverPhoto"] != nil)
        let renamed = try server.json("PUT", galleryPath, savedBack(fetchedGallery, ["name": "Trip 2024"]))
        #expect(renamed.status == 200, "\(renamed.text)")
        #expect(try server.gallery(gallery)["name"] as? String == "Trip 2024")
        for change: [String: Any] in [["photoCount": 5], ["coverPhoto": TestServer.pointer("Photo", photos[1])]] {
            let r = try server.json("PUT", galleryPath, savedBack(fetchedGallery, change))
            #expect(r.status == 400 && F.code(r) == 105, "\(change): \(r.text)")
        }
        // The item: its gallery and photo pointers come back with the new position.
        let itemPath = "/parse/classes/GalleryItem/\(item)"
        let fetchedItem = try server.request("GET", itemPath).json
        let moved = try server.json("PUT", itemPath, savedBack(fetchedItem, ["position": 1]))
        #expect(moved.status == 200, "\(moved.text)")
        #expect(try server.photoOrder(of: gallery) == [photos[1], photos[0]])
        let repointed = try server.json(
            "PUT", itemPath,
            savedBack(
                fetchedItem,
                [
                    "position": 0, "photo": TestServer.pointer("Photo", photos[1]),
                ]))
        #expect(repointed.status == 400 && F.code(repointed) == 105, "\(repointed.text)")
        #expect(try server.photoOrder(of: gallery) == [photos[1], photos[0]])
    }

    // MARK: 5. Array operations on tags

    @Test func tags_AddAddUniqueAndRemove_AreAtomic() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        try F.insert(server, [F.Row(id: "aaaaaaaaa1", createdAt: Date(), tags: ["a"])])
        let path = "/parse/classes/Photo/aaaaaaaaa1"
        func tags() throws -> [String] { try server.request("GET", path).json["tags"] as? [String] ?? [] }
        #expect(try server.json("PUT", path, ["tags": ["__op": "AddUnique", "objects": ["a", "b"]]]).status == 200)
        #expect(try tags() == ["a", "b"])
        #expect(try server.json("PUT", path, ["tags": ["__op": "Add", "objects": ["c", "a"]]]).status == 200)
        #expect(try tags() == ["a", "b", "c"])
        #expect(try server.json("PUT", path, ["tags": ["__op": "Remove", "objects": ["a", "zz"]]]).status == 200)
        #expect(try tags() == ["b", "c"])
        // The search column follows.
        let found = try get(
            server, "/parse/classes/Photo", [("where", #"{"tags":{"$text":{"$search":{"$term":"c"}}}}"#)])
        #expect(F.ids(found) == ["aaaaaaaaa1"], "\(found.text)")
        // Two clients adding at once both land.
        let adders = 8
        DispatchQueue.concurrentPerform(iterations: adders) { index in
            _ = try? server.json("PUT", path, ["tags": ["__op": "AddUnique", "objects": ["t\(index)"]]])
        }
        #expect(Set(try tags()) == Set(["b", "c"] + (0..<adders).map { "t\($0)" }))
        // On create, Add sets the array.
        let created = try server.json("POST", "/parse/classes/Photo", ["tags": ["__op": "Add", "objects": ["x"]]])
        #expect(F.code(created) == 142)  // original is still required: the operation itself parsed
        // What is really wrong stays an error: unknown operation, wrong objects, over the limit.
        #expect(F.code(try server.json("PUT", path, ["tags": ["__op": "Increment", "amount": 1]])) == 111)
        #expect(F.code(try server.json("PUT", path, ["tags": ["__op": "Add", "objects": [1]]])) == 111)
        #expect(F.code(try server.json("PUT", path, ["tags": ["__op": "Add", "objects": "a"]])) == 107)
        #expect(F.code(try server.json("PUT", path, ["title": ["__op": "Add", "objects": ["a"]]])) == 111)
        let many = (0..<95).map { "m\($0)" }
        let over = try server.json("PUT", path, ["tags": ["__op": "AddUnique", "objects": many]])
        #expect(over.status == 400 && F.code(over) == 142, "\(over.text)")
        #expect(try tags().count == 2 + adders)
    }

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
