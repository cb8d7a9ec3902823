import Foundation
import Testing

@testable import GalleryApp

/// `GET /parse/classes/Photo` against a real server and database: every parameter and operator,
/// and 102 for whatever is not understood.
@Suite struct ManifestQueryTests {
    typealias F = ManifestFixtures
    static let t0 = Date(timeIntervalSince1970: 1_700_000_000)

    /// Six photos with distinct fields, created a minute apart (a oldest … f newest).
    static func sixPhotos(_ server: TestServer) throws {
        func at(_ minutes: Double) -> Date { t0.addingTimeInterval(minutes * 60) }
        try F.insert(
            server,
            [
                F.Row(
                    id: "aaaaaaaaaa", createdAt: at(0), filename: "IMG_0001.jpg", title: "Sunset at the beach",
                    tags: ["beach", "sunset"], width: 400, height: 300, byteSize: 100, status: "ready",
                    takenAt: at(-100)),
                F.Row(
                    id: "bbbbbbbbbb", createdAt: at(1), filename: "IMG_0002.jpg", title: "Mountain lake",
                    tags: ["lake", "mountain"], width: 300, height: 400, byteSize: 200, status: "ready",
                    dominantColor: nil),
                F.Row(
                    id: "cccccccccc", createdAt: at(2), filename: "DSC_100%_off.jpg", title: "Sale sign",
                    tags: [], width: 1000, height: 1000, byteSize: 300, status: "pending", dominantColor: nil),
                F.Row(
                    id: "dddddddddd", createdAt: at(3), filename: "été_2023.jpg", title: "Été à la plage",
                    tags: ["beach"], width: 640, height: 480, byteSize: 400, status: "failed"),
                F.Row(
                    id: "eeeeeeeeee", createdAt: at(4), filename: "scan.jpg", title: "Sunrise over the lake",
                    tags: ["lake", "sunrise"], width: 800, height: 200, byteSize: 500, status: "processing"),
                F.Row(
                    id: "ffffffffff", createdAt: at(5), filename: "IMG_0003.jpg", title: "",
                    tags: ["cat"], width: 200, height: 200, byteSize: 600, status: "ready", takenAt: at(-50)),
            ])
    }

    /// The ids a `where` selects, newest first.
    static func ids(_ server: TestServer, where condition: Any, _ extra: [String: String] = [:]) throws -> [String] {
        var items = extra
        items["where"] = F.json(condition)
        let r = try F.find(server, items)
        #expect(r.status == 200, "\(F.json(condition)): \(r.text)")
        return F.ids(r)
    }

    @Test func find_ReturnsNewestFirst_WithDefaultAndCappedLimitAndSkip() throws {
        let server = try TestServer(workers: 0) { $0.maxQueryLimit = 110 }
        defer { server.stop() }
        try F.insertMany(server, count: 130)
        let all = try F.find(server)
        #expect(all.status == 200)
        let ids = F.ids(all)
        #expect(ids.count == 100)  // Parse's default limit
        #expect(ids.first == "p000000130")
        #expect(ids == (31...130).reversed().map { "p" + String(format: "%09d", $0) })
        #expect(F.ids(try F.find(server, ["limit": "5000"])).count == 110)  // capped by max_query_limit
        #expect(F.ids(try F.find(server, ["limit": "3"])) == ["p000000130", "p000000129", "p000000128"])
        #expect(F.ids(try F.find(server, ["limit": "2", "skip": "3"])) == ["p000000127", "p000000126"])
        #expect(F.ids(try F.find(server, ["order": "createdAt", "limit": "2"])) == ["p000000001", "p000000002"])
        #expect(
            F.ids(try F.find(server, ["order": "-byteSize,objectId", "limit": "2"])) == ["p000000001", "p000000002"])
        #expect(F.ids(try F.find(server, ["limit": "0"])).isEmpty)
    }

    @Test func find_AppliesComparisonOperators_OnNumbersStringsAndDates() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        try Self.sixPhotos(server)
        #expect(try Self.ids(server, where: ["width": ["$lt": 400]]) == ["ffffffffff", "bbbbbbbbbb"])
        #expect(try Self.ids(server, where: ["width": ["$lte": 400]]) == ["ffffffffff", "bbbbbbbbbb", "aaaaaaaaaa"])
        #expect(try Self.ids(server, where: ["width": ["$gt": 640]]) == ["eeeeeeeeee", "cccccccccc"])
        #expect(try Self.ids(server, where: ["width": ["$gte": 640, "$lt": 1000]]) == ["eeeeeeeeee", "dddddddddd"])
        #expect(try Self.ids(server, where: ["width": ["$eq": 300]]) == ["bbbbbbbbbb"])
        #expect(try Self.ids(server, where: ["width": 300]) == ["bbbbbbbbbb"])
        #expect(
            try Self.ids(server, where: ["status": ["$ne": "ready"]]) == ["eeeeeeeeee", "dddddddddd", "cccccccccc"])
        #expect(try Self.ids(server, where: ["aspectRatio": ["$gt": 1.5]]) == ["eeeeeeeeee"])
        #expect(try Self.ids(server, where: ["aspectRatio": 1]) == ["ffffffffff", "cccccccccc"])
        #expect(
            try Self.ids(server, where: ["filename": ["$gte": "IMG_0002.jpg", "$lt": "J"]]) == [
                "ffffffffff", "bbbbbbbbbb",
            ])
        let t2 = Self.t0.addingTimeInterval(120)
        #expect(try Self.ids(server, where: ["createdAt": ["$lt": F.date(t2)]]) == ["bbbbbbbbbb", "aaaaaaaaaa"])
        #expect(
            try Self.ids(server, where: ["createdAt": ["$lte": F.date(t2)]]) == [
                "cccccccccc", "bbbbbbbbbb", "aaaaaaaaaa",
            ])
        #expect(try Self.ids(server, where: ["createdAt": F.date(t2)]) == ["cccccccccc"])
        #expect(
            try Self.ids(server, where: ["createdAt": ["$gt": F.date(t2)], "byteSize": ["$lte": 500]]) == [
                "eeeeeeeeee", "dddddddddd",
            ])
        #expect(try Self.ids(server, where: ["takenAt": ["$lt": F.date(Self.t0)]]) == ["ffffffffff", "aaaaaaaaaa"])
        #expect(try Self.ids(server, where: ["objectId": "dddddddddd"]) == ["dddddddddd"])
    }

    @Test func find_AppliesInNinExistsAndArrayConstraints() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        try Self.sixPhotos(server)
        #expect(
            try Self.ids(server, where: ["status": ["$in": ["pending", "failed"]]]) == ["dddddddddd", "cccccccccc"])
        #expect(
            try Self.ids(server, where: ["status": ["$nin": ["ready", "pending"]]]) == ["eeeeeeeeee", "dddddddddd"])
        #expect(try Self.ids(server, where: ["width": ["$in": [200, 1000]]]) == ["ffffffffff", "cccccccccc"])
        #expect(try Self.ids(server, where: ["dominantColor": ["$exists": false]]) == ["cccccccccc", "bbbbbbbbbb"])
        #expect(try Self.ids(server, where: ["takenAt": ["$exists": true]]) == ["ffffffffff", "aaaaaaaaaa"])
        #expect(try Self.ids(server, where: ["dominantColor": NSNull()]) == ["cccccccccc", "bbbbbbbbbb"])
        // Arrays: equality with a string means "contains", $in overlaps, $all contains all, $nin none.
        #expect(try Self.ids(server, where: ["tags": "beach"]) == ["dddddddddd", "aaaaaaaaaa"])
        #expect(try Self.ids(server, where: ["tags": ["$in": ["cat", "mountain"]]]) == ["ffffffffff", "bbbbbbbbbb"])
        #expect(try Self.ids(server, where: ["tags": ["$all": ["lake", "sunrise"]]]) == ["eeeeeeeeee"])
        #expect(try Self.ids(server, where: ["tags": ["$nin": ["lake", "beach"]]]) == ["ffffffffff", "cccccccccc"])
        #expect(try Self.ids(server, where: ["tags": ["cat"]]) == ["ffffffffff"])
        #expect(try Self.ids(server, where: ["original": ["$exists": true]]).count == 6)
    }

    @Test func find_CombinesConditions_WithOrAndAnd() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        try Self.sixPhotos(server)
        #expect(
            try Self.ids(server, where: ["$or": [["width": 200], ["status": "pending"]]]) == [
                "ffffffffff", "cccccccccc",
            ])
        #expect(
            try Self.ids(server, where: ["$and": [["width": ["$gte": 300]], ["width": ["$lte": 400]]]]) == [
                "bbbbbbbbbb", "aaaaaaaaaa",
            ])
        #expect(
            try Self.ids(
                server,
                where: [
                    "status": "ready",
                    "$or": [["tags": "beach"], ["$and": [["width": ["$lt": 250]], ["height": 200]]]],
                ]) == ["ffffffffff", "aaaaaaaaaa"])
        #expect(try Self.ids(server, where: ["$or": [["width": 1], ["width": 2]]]).isEmpty)
    }

    @Test func find_MatchesRegex_PrefixesExactlyAndOtherPatternsBounded() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        try Self.sixPhotos(server)
        // Rows around a prefix's byte range: the range must include every "IMG_" name and nothing else.
        try F.insert(
            server,
            [
                F.Row(id: "gggggggggg", createdAt: Self.t0.addingTimeInterval(-60), filename: "IMG_"),
                F.Row(id: "hhhhhhhhhh", createdAt: Self.t0.addingTimeInterval(-120), filename: "IMG`"),
                F.Row(id: "iiiiiiiiii", createdAt: Self.t0.addingTimeInterval(-180), filename: "IMG^zz"),
                F.Row(id: "jjjjjjjjjj", createdAt: Self.t0.addingTimeInterval(-240), filename: "IMG_\u{10FFFF}x"),
                F.Row(
                    id: "kkkkkkkkkk", createdAt: Self.t0.addingTimeInterval(-300), filename: "éte\u{10FFFF}",
                    title: "\u{10FFFF}"),
                F.Row(id: "llllllllll", createdAt: Self.t0.addingTimeInterval(-360), filename: "été\u{10FFFF}"),
            ])
        #expect(
            try Self.ids(server, where: ["filename": ["$regex": "^IMG_"]])
                == ["ffffffffff", "bbbbbbbbbb", "aaaaaaaaaa", "gggggggggg", "jjjjjjjjjj"])
        #expect(
            try Self.ids(server, where: ["filename": ["$regex": "^IMG_000"]]) == [
                "ffffffffff", "bbbbbbbbbb", "aaaaaaaaaa",
            ])
        #expect(try Self.ids(server, where: ["filename": ["$regex": "^DSC_100%_off\\."]]) == ["cccccccccc"])
        #expect(try Self.ids(server, where: ["filename": ["$regex": "^DSC_100_"]]).isEmpty)  // `_` is literal
        #expect(try Self.ids(server, where: ["filename": ["$regex": "^été"]]) == ["dddddddddd", "llllllllll"])
        #expect(try Self.ids(server, where: ["filename": ["$regex": "^éte\u{10FFFF}"]]) == ["kkkkkkkkkk"])
        #expect(try Self.ids(server, where: ["title": ["$regex": "^\u{10FFFF}"]]) == ["kkkkkkkkkk"])
        #expect(try Self.ids(server, where: ["title": ["$regex": "^Sun"]]) == ["eeeeeeeeee", "aaaaaaaaaa"])
        #expect(
            try Self.ids(server, where: ["title": ["$regex": "^sun", "$options": "i"]]) == ["eeeeeeeeee", "aaaaaaaaaa"])
        #expect(try Self.ids(server, where: ["title": ["$regex": "lake$"]]) == ["eeeeeeeeee", "bbbbbbbbbb"])
        #expect(try Self.ids(server, where: ["title": ["$regex": "\\bthe\\b"]]) == ["eeeeeeeeee", "aaaaaaaaaa"])
        #expect(try Self.ids(server, where: ["title": ["$regex": "^"]]).count == 12)
        // Patterns that could be slow or are not supported are refused, not run.
        for pattern in ["(a+)+$", "(a|b)\\1", String(repeating: "a", count: 300), "a{1000}", "(?<n>a)"] {
            let r = try F.find(server, ["where": F.json(["title": ["$regex": pattern]])])
            #expect(r.status == 400, "\(pattern)")
            #expect(F.code(r) == 102, "\(pattern)")
        }
        let onNumber = try F.find(server, ["where": F.json(["width": ["$regex": "^1"]])])
        #expect(onNumber.status == 400 && F.code(onNumber) == 102)
    }

    @Test func find_SearchesText_InFilenameTitleAndTags_OrderedByRelevance() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        try Self.sixPhotos(server)
        func search(_ term: String, field: String = "title") -> [String: Any] {
            [field: ["$text": ["$search": ["$term": term]]]]
        }
        #expect(Set(try Self.ids(server, where: search("lake"))) == ["bbbbbbbbbb", "eeeeeeeeee"])
        #expect(try Self.ids(server, where: search("cat", field: "tags")) == ["ffffffffff"])  // a tag
        #expect(try Self.ids(server, where: search("scan", field: "filename")) == ["eeeeeeeeee"])  // a filename word
        #expect(try Self.ids(server, where: search("IMG_0002", field: "filename")) == ["bbbbbbbbbb"])
        #expect(try Self.ids(server, where: search("2023", field: "filename")) == ["dddddddddd"])
        #expect(try Self.ids(server, where: search("DSC_100%_off.jpg", field: "filename")) == ["cccccccccc"])
        #expect(try Self.ids(server, where: search("SUNSET")) == ["aaaaaaaaaa"])  // case-insensitive
        #expect(try Self.ids(server, where: search("sunrise lake")) == ["eeeeeeeeee"])  // all words
        #expect(Set(try Self.ids(server, where: search("sunset or mountain"))) == ["aaaaaaaaaa", "bbbbbbbbbb"])
        #expect(try Self.ids(server, where: search("nothing-like-this")).isEmpty)
        // "beach" twice (title and tag) outranks "beach" once, whatever the dates say.
        let ranked = try F.find(server, ["where": F.json(search("beach")), "order": "$score", "keys": "$score,title"])
        #expect(ranked.status == 200)
        #expect(F.ids(ranked) == ["aaaaaaaaaa", "dddddddddd"])
        let scores = F.results(ranked).compactMap { $0["score"] as? Double }
        #expect(scores.count == 2 && scores[0] > scores[1])
        // $score without $text, $text on a field outside the search, bad $text shapes.
        #expect(try F.find(server, ["order": "$score"]).status == 400)
        let wrongField = try F.find(server, ["where": F.json(search("x", field: "status"))])
        #expect(wrongField.status == 400 && F.code(wrongField) == 102)
        let badShape = try F.find(server, ["where": F.json(["title": ["$text": ["$term": "x"]]])])
        #expect(badShape.status == 400)
    }

    @Test func find_Keys_TrimObjects_AndExcludeKeysDropFields() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        try Self.sixPhotos(server)
        let trimmed = F.results(try F.find(server, ["keys": "title,width", "limit": "1"]))
        #expect(trimmed.count == 1)
        #expect(Set(trimmed[0].keys) == ["objectId", "createdAt", "updatedAt", "title", "width"])
        let excluded = F.results(try F.find(server, ["excludeKeys": "tags,original,thumbnail,preview", "limit": "1"]))
        #expect(excluded[0]["tags"] == nil && excluded[0]["original"] == nil && excluded[0]["thumbnail"] == nil)
        #expect(excluded[0]["width"] as? Int == 200)
        let unknown = try F.find(server, ["keys": "title,nope"])
        #expect(unknown.status == 400 && F.code(unknown) == 102)
        let one = try server.request("GET", "/parse/classes/Photo/aaaaaaaaaa?keys=status")
        #expect(Set(one.json.keys) == ["objectId", "createdAt", "updatedAt", "status"])
    }

    @Test func find_Counts_WithResultsAndAlone_AndFilteredCountsAreExact() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        try Self.sixPhotos(server)
        let withResults = try F.find(server, ["count": "1", "limit": "2"])
        #expect(withResults.json["count"] as? Int == 6)
        #expect(F.ids(withResults).count == 2)
        let alone = try F.find(server, ["count": "1", "limit": "0"])
        #expect(alone.json["count"] as? Int == 6)
        #expect((alone.json["results"] as? [Any])?.isEmpty == true)
        let filtered = try F.find(server, ["count": "1", "limit": "0", "where": F.json(["status": "ready"])])
        #expect(filtered.json["count"] as? Int == 3)
        let searched = try F.find(server, ["count": "1", "limit": "0", "where": F.json(["tags": "lake"])])
        #expect(searched.json["count"] as? Int == 2)
        #expect(try F.find(server, ["limit": "1"]).json["count"] == nil)
        // Trashed photos leave the counts (and the counter follows).
        #expect(try server.request("DELETE", "/parse/classes/Photo/aaaaaaaaaa").status == 200)
        #expect(try F.find(server, ["count": "1", "limit": "0"]).json["count"] as? Int == 5)
        #expect(
            try F.find(server, ["count": "1", "limit": "0", "where": F.json(["status": "ready"])]).json["count"] as? Int
                == 2)
        let trashed = try F.find(server, ["count": "1", "where": F.json(["deletedAt": ["$exists": true]])])
        #expect(trashed.json["count"] as? Int == 1)
        #expect(F.ids(trashed) == ["aaaaaaaaaa"])
        let bad = try F.find(server, ["count": "yes"])
        #expect(bad.status == 400 && F.code(bad) == 102)
    }

    @Test func find_CountAll_ReadsTheRowCounter_NotTheTable() throws {
        // Without kept answers: the counter is changed below behind the triggers, which moves no
        // change sequence, so a kept count (ManifestCache) would rightly still be answered.
        let server = try TestServer(workers: 0) { $0.manifestCacheBytes = 0 }
        defer { server.stop() }
        try F.insertMany(server, count: 50)
        #expect(try F.find(server, ["count": "1", "limit": "0"]).json["count"] as? Int == 50)
        // A count without conditions is the trigger-kept counter: changing the counter changes the answer.
        try server.application.pool.query("update row_counts set n = 123456 where name = 'photos_live'")
        #expect(try F.find(server, ["count": "1", "limit": "0"]).json["count"] as? Int == 123_456)
        // A filtered count counts rows.
        #expect(
            try F.find(server, ["count": "1", "limit": "0", "where": F.json(["width": 400])]).json["count"] as? Int
                == 50)
    }

    @Test func find_RejectsWhatItDoesNotUnderstand_With102() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        try Self.sixPhotos(server)
        let cases: [[String: String]] = [
            ["bogus": "1"],  // unknown parameter
            ["where": F.json(["nope": 1])],  // unknown field
            ["where": F.json(["width": ["$near": 1]])],  // unknown operator
            ["where": F.json(["$nor": [["width": 1]]])],  // unknown top-level operator
            ["where": F.json(["width": "wide"])],  // type mismatch
            ["where": F.json(["width": ["$lt": "3"]])],
            ["where": F.json(["createdAt": ["$lt": "2024-01-01"]])],  // a date must be a Date
            ["where": F.json(["createdAt": ["$lt": ["__type": "Date", "iso": "yesterday"]]])],
            ["where": F.json(["title": ["$in": "a"]])],  // $in needs an array
            ["where": F.json(["tags": ["$lt": "a"]])],  // no order on arrays
            ["where": F.json(["status": ["$exists": "yes"]])],
            ["where": F.json(["$or": []])],
            ["where": F.json(["$or": "x"])],
            ["where": F.json(["thumbnail": "x"])],  // files support $exists only
            ["order": "nope"],
            ["order": "tags"],  // not sortable
            ["order": "-createdAt,-createdAt"],
            ["limit": "-1"], ["limit": "ten"], ["skip": "-5"],
            ["keys": "nope"], ["excludeKeys": "nope"], ["include": "title"], ["include": "nope"],
            ["limit": "1", "where": "[1,2]"],  // where must be an object
        ]
        for items in cases {
            let r = try F.find(server, items)
            #expect(r.status == 400, "\(items): \(r.text)")
            #expect(F.code(r) == 102, "\(items): \(r.text)")
        }
        // A where that is not JSON at all is an invalid query (102), also a 400.
        let notJSON = try F.find(server, ["where": "{title:1}"])
        #expect(notJSON.status == 400 && F.code(notJSON) == 102)
        let unknownClass = try F.find(server, className: "Nope")
        #expect(unknownClass.status == 400 && F.code(unknownClass) == 103)
    }

    @Test func find_IncludesPointers_OnGalleryItems() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        try Self.sixPhotos(server)
        let gallery = try server.json("POST", "/parse/classes/Gallery", ["name": "Holidays"])
        let galleryId = try #require(gallery.json["objectId"] as? String)
        let item = try server.json(
            "POST", "/parse/classes/GalleryItem",
            [
                "gallery": ["__type": "Pointer", "className": "Gallery", "objectId": galleryId],
                "photo": ["__type": "Pointer", "className": "Photo", "objectId": "aaaaaaaaaa"],
            ])
        #expect(item.status == 201, "\(item.text)")
        let plain = F.results(try F.find(server, className: "GalleryItem"))
        let pointer = try #require(plain.first?["photo"] as? [String: Any])
        #expect(pointer["__type"] as? String == "Pointer" && pointer["objectId"] as? String == "aaaaaaaaaa")
        let included = F.results(
            try F.find(
                server, ["include": "photo", "keys": "photo.title,photo.thumbnail,position"],
                className: "GalleryItem"))
        let photo = try #require(included.first?["photo"] as? [String: Any])
        #expect(photo["__type"] as? String == "Object" && photo["className"] as? String == "Photo")
        #expect(photo["title"] as? String == "Sunset at the beach")
        #expect((photo["thumbnail"] as? [String: Any])?["url"] as? String != nil)
        #expect(photo["width"] == nil)
        #expect(included.first?["gallery"] == nil)
        let withGallery = F.results(try F.find(server, ["include": "gallery"], className: "GalleryItem"))
        #expect((withGallery.first?["gallery"] as? [String: Any])?["name"] as? String == "Holidays")
    }
}
