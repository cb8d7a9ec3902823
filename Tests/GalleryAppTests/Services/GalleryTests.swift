import Foundation
import Testing

@testable import GalleryApp

/// Galleries end to end over HTTP against a real server and PostgreSQL: create, add, reorder,
/// rename, Recently Deleted, restore, delete for good, and the error codes on the way.
@Suite struct GalleryTests {
    @Test func galleryFlow_CreatesReordersRenamesTrashesRestoresAndDeletes_OverHTTP() throws {
        let server = try TestServer(workers: 1)
        defer { server.stop() }
        // A few real uploads (processed by the worker) and rows inserted directly for speed.
        var photos: [String] = []
        for seed in 1...3 {
            photos.append(
                try server.uploadPhoto(
                    try TestJPEG.make(width: 96, height: 64, seed: UInt64(seed)), name: "p\(seed).jpg"))
        }
        photos += try server.insertPhotos(3)
        for id in photos.prefix(3) { #expect(try server.waitForProcessing(id) == "ready") }

        let trip = try server.createGallery("Trip")
        let family = try server.createGallery("Family")
        var tripItems: [String] = []
        for photo in photos { tripItems.append(try server.addedItem(gallery: trip, photo: photo)) }
        _ = try server.addedItem(gallery: family, photo: photos[0])
        _ = try server.addedItem(gallery: family, photo: photos[4])
        #expect(try server.photoOrder(of: trip) == photos)
        #expect(try server.items(of: trip).map(\.position) == Array(0..<6))

        // Drag the last photo to the front, then the (new) second one to the end.
        #expect(try server.moveItem(tripItems[5], to: 0).status == 200)
        #expect(try server.photoOrder(of: trip) == [photos[5], photos[0], photos[1], photos[2], photos[3], photos[4]])
        #expect(try server.moveItem(tripItems[0], to: 5).status == 200)
        #expect(try server.photoOrder(of: trip) == [photos[5], photos[1], photos[2], photos[3], photos[4], photos[0]])

        // Rename (trimmed).
        let renamed = try server.json("PUT", "/parse/classes/Gallery/\(trip)", ["name": "  Trip 2024 \n"])
        #expect(renamed.status == 200)
        #expect(renamed.json["updatedAt"] is String)
        let tripObject = try server.gallery(trip)
        #expect(tripObject["name"] as? String == "Trip 2024")
        #expect(tripObject["photoCount"] as? Int == 6)
        #expect((tripObject["coverPhoto"] as? [String: Any])?["objectId"] as? String == photos[5])
        #expect((tripObject["coverPhoto"] as? [String: Any])?["className"] as? String == "Photo")

        // Both galleries listed; Family goes to Recently Deleted.
        func names(_ query: String) throws -> [String] {
            let r = try server.request("GET", "/parse/classes/Gallery?order=name" + query)
            #expect(r.status == 200)
            return (r.json["results"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
        }
        #expect(try names("") == ["Family", "Trip 2024"])
        let trashed = try server.request("DELETE", "/parse/classes/Gallery/\(family)")
        #expect(trashed.status == 200)
        #expect(trashed.text == "{}")
        let recentlyDeleted = "&where=" + TestServer.queryValue(#"{"deletedAt":{"$exists":true}}"#)
        #expect(try names("") == ["Trip 2024"])
        #expect(try names(recentlyDeleted) == ["Family"])
        let count = try server.request("GET", "/parse/classes/Gallery?count=1&limit=0")
        #expect(count.json["count"] as? Int == 1)
        // A trashed gallery still answers by id (Recently Deleted shows it), with its deletedAt.
        let familyObject = try server.gallery(family)
        #expect((familyObject["deletedAt"] as? [String: Any])?["__type"] as? String == "Date")
        #expect(familyObject["photoCount"] as? Int == 2)
        // Its items are out of item queries while it is in the trash.
        #expect(try server.items(of: family).isEmpty)

        // Restore: back in the live list with its items.
        let restored = try server.json("PUT", "/parse/classes/Gallery/\(family)", ["deletedAt": ["__op": "Delete"]])
        #expect(restored.status == 200)
        #expect(try names("") == ["Family", "Trip 2024"])
        #expect(try names(recentlyDeleted).isEmpty)
        #expect(try server.photoOrder(of: family) == [photos[0], photos[4]])
        #expect(try server.gallery(family)["deletedAt"] == nil)

        // Delete for good: trash (a retried DELETE keeps it there), then DELETE /purge/Gallery/<id>.
        // The items go, the photos stay.
        let live = try server.request("DELETE", "/parse/purge/Gallery/\(photos[0])")
        #expect(live.status == 404 && live.json["code"] as? Int == 101)
        let notTrashed = try server.request("DELETE", "/parse/purge/Gallery/\(family)")
        #expect(notTrashed.status == 400 && notTrashed.json["code"] as? Int == 119)
        #expect(try server.request("DELETE", "/parse/classes/Gallery/\(family)").status == 200)
        #expect(try server.request("DELETE", "/parse/classes/Gallery/\(family)").status == 200)
        #expect(try server.request("GET", "/parse/classes/Gallery/\(family)").status == 200)
        #expect(try server.request("DELETE", "/parse/purge/Gallery/\(family)").status == 200)
        let gone = try server.request("GET", "/parse/classes/Gallery/\(family)")
        #expect(gone.status == 404)
        #expect(gone.json["code"] as? Int == 101)
        #expect(try server.request("DELETE", "/parse/classes/Gallery/\(family)").status == 404)
        #expect(try server.request("DELETE", "/parse/purge/Gallery/\(family)").status == 404)
        #expect(try server.storedItems(of: family).isEmpty)
        for photo in [photos[0], photos[4]] {
            let r = try server.request("GET", "/parse/classes/Photo/\(photo)")
            #expect(r.status == 200)
            #expect(r.json["deletedAt"] == nil)
        }
        // The other gallery that shares photos[0] is untouched.
        #expect(try server.photoOrder(of: trip) == [photos[5], photos[1], photos[2], photos[3], photos[4], photos[0]])
        try server.expectConsistent(trip)
    }

    @Test func itemMoves_ShiftTheItemsBetween_AndClampPastTheEnd() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let photos = try server.insertPhotos(5)
        let gallery = try server.createGallery("Moves")
        var items: [String: String] = [:]  // photo → item
        for photo in photos { items[photo] = try server.addedItem(gallery: gallery, photo: photo) }
        let (a, b, c, d, e) = (photos[0], photos[1], photos[2], photos[3], photos[4])

        // To the front: the items before it shift down by one.
        #expect(try server.moveItem(items[d]!, to: 0).status == 200)
        #expect(try server.photoOrder(of: gallery) == [d, a, b, c, e])
        // To the end.
        #expect(try server.moveItem(items[a]!, to: 4).status == 200)
        #expect(try server.photoOrder(of: gallery) == [d, b, c, e, a])
        // Past the end: clamped to the last position.
        let past = try server.moveItem(items[b]!, to: 1000)
        #expect(past.status == 200)
        #expect(try server.photoOrder(of: gallery) == [d, c, e, a, b])
        #expect(try server.items(of: gallery).first { $0.photo == b }?.position == 4)
        // Within the middle, both directions.
        #expect(try server.moveItem(items[c]!, to: 3).status == 200)
        #expect(try server.photoOrder(of: gallery) == [d, e, a, c, b])
        #expect(try server.moveItem(items[b]!, to: 1).status == 200)
        #expect(try server.photoOrder(of: gallery) == [d, b, e, a, c])
        // To where it already is: nothing moves, updatedAt still answered.
        let same = try server.moveItem(items[d]!, to: 0)
        #expect(same.status == 200)
        #expect(same.json["updatedAt"] is String)
        #expect(try server.photoOrder(of: gallery) == [d, b, e, a, c])
        // Position as a JSON number with a zero fraction is accepted.
        #expect(
            try server.request("PUT", "/parse/classes/GalleryItem/\(items[c]!)", body: Data(#"{"position":0.0}"#.utf8))
                .status == 200)
        #expect(try server.photoOrder(of: gallery) == [c, d, b, e, a])

        // Removing closes the gap.
        #expect(try server.request("DELETE", "/parse/classes/GalleryItem/\(items[d]!)").status == 200)
        #expect(try server.photoOrder(of: gallery) == [c, b, e, a])
        #expect(try server.items(of: gallery).map(\.position) == [0, 1, 2, 3])
        #expect(try server.request("DELETE", "/parse/classes/GalleryItem/\(items[d]!)").status == 404)
        // The photo itself is still there.
        #expect(try server.request("GET", "/parse/classes/Photo/\(d)").status == 200)
        try server.expectConsistent(gallery)
        #expect(try server.gallery(gallery)["photoCount"] as? Int == 4)
    }

    @Test func addItem_InsertsAtAPosition_AppendsPastTheEnd_AndRejectsDuplicatesWith137() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let photos = try server.insertPhotos(6)
        let gallery = try server.createGallery("Inserts")
        let other = try server.createGallery("Other")
        let (a, b, c, d, e, f) = (photos[0], photos[1], photos[2], photos[3], photos[4], photos[5])
        let first = try server.addItem(gallery: gallery, photo: a)
        #expect(first.status == 201)
        #expect(first.json["objectId"] is String)
        #expect(first.json["createdAt"] is String)
        #expect(
            first.header("Location")?.hasSuffix("/parse/classes/GalleryItem/\(first.json["objectId"] as! String)")
                == true)
        _ = try server.addedItem(gallery: gallery, photo: b)
        // At the front, in the middle, past the end (appended), at exactly the end.
        _ = try server.addedItem(gallery: gallery, photo: c, position: 0)
        #expect(try server.photoOrder(of: gallery) == [c, a, b])
        _ = try server.addedItem(gallery: gallery, photo: d, position: 2)
        #expect(try server.photoOrder(of: gallery) == [c, a, d, b])
        let appended = try server.addedItem(gallery: gallery, photo: e, position: 99)
        #expect(try server.photoOrder(of: gallery) == [c, a, d, b, e])
        let get = try server.request("GET", "/parse/classes/GalleryItem/\(appended)")
        #expect(get.json["position"] as? Int == 4)
        #expect((get.json["gallery"] as? [String: Any])?["objectId"] as? String == gallery)
        _ = try server.addedItem(gallery: gallery, photo: f, position: 5)
        #expect(try server.photoOrder(of: gallery) == [c, a, d, b, e, f])

        // Once per gallery: 137, and nothing changes.
        let duplicate = try server.addItem(gallery: gallery, photo: d, position: 0)
        #expect(duplicate.status == 400)
        #expect(duplicate.json["code"] as? Int == 137)
        #expect(try server.photoOrder(of: gallery) == [c, a, d, b, e, f])
        // The same photo in another gallery is fine.
        #expect(try server.addItem(gallery: other, photo: d).status == 201)
        // Over batch too, one success and one duplicate.
        let batch = try server.json(
            "POST", "/parse/batch",
            [
                "requests": [
                    [
                        "method": "POST", "path": "/parse/classes/GalleryItem",
                        "body": [
                            "gallery": TestServer.pointer("Gallery", other), "photo": TestServer.pointer("Photo", a),
                            "position": 0,
                        ],
                    ],
                    [
                        "method": "POST", "path": "/parse/classes/GalleryItem",
                        "body": [
                            "gallery": TestServer.pointer("Gallery", other), "photo": TestServer.pointer("Photo", a),
                        ],
                    ],
                ]
            ])
        #expect(batch.status == 200)
        let answers = batch.jsonArray as? [[String: Any]] ?? []
        #expect(answers.count == 2)
        #expect((answers.first?["success"] as? [String: Any])?["objectId"] is String)
        #expect((answers.last?["error"] as? [String: Any])?["code"] as? Int == 137)
        #expect(try server.photoOrder(of: other) == [a, d])
        try server.expectConsistent(gallery)
        try server.expectConsistent(other)
        #expect(try server.gallery(gallery)["photoCount"] as? Int == 6)
        #expect(try server.gallery(other)["photoCount"] as? Int == 2)
    }

    @Test func pointersToMissingOrTrashedObjects_Are101_AndChangesToATrashedGallery_Are119() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let photos = try server.insertPhotos(3)
        let gallery = try server.createGallery("Codes")
        let item = try server.addedItem(gallery: gallery, photo: photos[0])
        func expectError(
            _ r: TestServer.Response, _ code: Int, _ status: Int, sourceLocation: SourceLocation = #_sourceLocation
        ) {
            #expect(r.status == status, "\(r.text)", sourceLocation: sourceLocation)
            #expect(r.json["code"] as? Int == code, "\(r.text)", sourceLocation: sourceLocation)
        }
        // Missing targets: 101 (HTTP 404), as Parse answers for an object it cannot find.
        expectError(try server.addItem(gallery: "Nonexisten", photo: photos[1]), 101, 404)
        expectError(try server.addItem(gallery: gallery, photo: "Nonexisten"), 101, 404)
        expectError(try server.moveItem("Nonexisten", to: 0), 101, 404)
        expectError(try server.request("DELETE", "/parse/classes/GalleryItem/Nonexisten"), 101, 404)
        expectError(try server.json("PUT", "/parse/classes/Gallery/Nonexisten", ["name": "x"]), 101, 404)
        expectError(try server.request("DELETE", "/parse/classes/Gallery/Nonexisten"), 101, 404)
        // A photo in Recently Deleted cannot be added either (it is hidden like a missing one).
        #expect(try server.request("DELETE", "/parse/classes/Photo/\(photos[2])").status == 200)
        expectError(try server.addItem(gallery: gallery, photo: photos[2]), 101, 404)
        // Malformed pointers: wrong class 111, bad objectId 106, missing pointer 142.
        expectError(
            try server.json(
                "POST", "/parse/classes/GalleryItem",
                [
                    "gallery": TestServer.pointer("Photo", gallery), "photo": TestServer.pointer("Photo", photos[1]),
                ]), 111, 400)
        expectError(
            try server.json(
                "POST", "/parse/classes/GalleryItem",
                [
                    "gallery": TestServer.pointer("Gallery", "bad id!"),
                    "photo": TestServer.pointer("Photo", photos[1]),
                ]), 106, 400)
        expectError(
            try server.json("POST", "/parse/classes/GalleryItem", ["gallery": TestServer.pointer("Gallery", gallery)]),
            142, 400)
        expectError(
            try server.json(
                "POST", "/parse/classes/GalleryItem",
                [
                    "gallery": TestServer.pointer("Gallery", gallery), "photo": TestServer.pointer("Photo", photos[1]),
                    "position": -1,
                ]), 142, 400)

        // A trashed gallery: no change until restored (119), but it can still be read.
        #expect(try server.request("DELETE", "/parse/classes/Gallery/\(gallery)").status == 200)
        expectError(try server.addItem(gallery: gallery, photo: photos[1]), 119, 400)
        expectError(try server.moveItem(item, to: 0), 119, 400)
        expectError(try server.request("DELETE", "/parse/classes/GalleryItem/\(item)"), 119, 400)
        expectError(try server.json("PUT", "/parse/classes/Gallery/\(gallery)", ["name": "Renamed"]), 119, 400)
        #expect(try server.gallery(gallery)["name"] as? String == "Codes")
        #expect(try server.storedItems(of: gallery).map(\.photo) == [photos[0]])
        // Restore and rename in one PUT is allowed; then changes work again.
        let restore = try server.json(
            "PUT", "/parse/classes/Gallery/\(gallery)", ["deletedAt": ["__op": "Delete"], "name": "Back"])
        #expect(restore.status == 200, "\(restore.text)")
        #expect(try server.gallery(gallery)["name"] as? String == "Back")
        #expect(try server.addItem(gallery: gallery, photo: photos[1]).status == 201)
        #expect(try server.request("DELETE", "/parse/classes/GalleryItem/\(item)").status == 200)
        #expect(try server.photoOrder(of: gallery) == [photos[1]])
        // Restoring a live gallery is harmless.
        #expect(
            try server.json("PUT", "/parse/classes/Gallery/\(gallery)", ["deletedAt": ["__op": "Delete"]]).status == 200
        )
        try server.expectConsistent(gallery)
    }

    @Test func galleryItemPUT_ChangesOnlyPosition_AndRejectsOtherFieldsWith105() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let photos = try server.insertPhotos(3)
        let gallery = try server.createGallery("PUT")
        let other = try server.createGallery("Other")
        let item = try server.addedItem(gallery: gallery, photo: photos[0])
        _ = try server.addedItem(gallery: gallery, photo: photos[1])
        let path = "/parse/classes/GalleryItem/\(item)"
        for body: [String: Any] in [
            ["photo": TestServer.pointer("Photo", photos[2])],
            ["gallery": TestServer.pointer("Gallery", other)],
            ["position": 1, "photo": TestServer.pointer("Photo", photos[2])],
            ["objectId": "abcdefghij"],
            ["createdAt": "2020-01-01T00:00:00.000Z"],
            ["no such field": 1],
            ["deletedAt": ["__op": "Delete"]],
        ] {
            let r = try server.json("PUT", path, body)
            #expect(r.status == 400, "\(body): \(r.text)")
            #expect(r.json["code"] as? Int == 105, "\(body): \(r.text)")
        }
        let wrongType = try server.json("PUT", path, ["position": "1"])
        #expect(wrongType.json["code"] as? Int == 111)
        let negative = try server.json("PUT", path, ["position": -1])
        #expect(negative.json["code"] as? Int == 142)
        let fraction = try server.request("PUT", path, body: Data(#"{"position":1.5}"#.utf8))
        #expect(fraction.json["code"] as? Int == 111)
        // Nothing moved, nothing was re-pointed.
        #expect(try server.photoOrder(of: gallery) == [photos[0], photos[1]])
        #expect(try server.items(of: other).isEmpty)
        // An empty body changes nothing and answers the current updatedAt.
        let before = try server.request("GET", path).json["updatedAt"] as? String
        let empty = try server.json("PUT", path, [String: Any]())
        #expect(empty.status == 200)
        #expect(empty.json["updatedAt"] as? String == before)
        #expect(try server.json("PUT", "/parse/classes/GalleryItem/Nonexisten", [String: Any]()).status == 404)
        // A move answers an updatedAt that a GET returns too (millisecond precision).
        let moved = try server.moveItem(item, to: 1)
        #expect(moved.json["updatedAt"] as? String == (try server.request("GET", path).json["updatedAt"] as? String))
        // Gallery fields the server keeps: read-only.
        for body: [String: Any] in [["photoCount": 3], ["coverPhoto": TestServer.pointer("Photo", photos[0])]] {
            let r = try server.json("PUT", "/parse/classes/Gallery/\(gallery)", body)
            #expect(r.json["code"] as? Int == 105, "\(body): \(r.text)")
        }
    }

    @Test func galleryNames_AreTrimmedValidUTF8OfOneTo200Characters_OnCreateAndRename() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        func create(_ name: Any) throws -> TestServer.Response {
            try server.json("POST", "/parse/classes/Gallery", ["name": name])
        }
        // Trimmed on create.
        let trimmed = try create("\t  Summer  \n")
        #expect(trimmed.status == 201)
        let id = try #require(trimmed.json["objectId"] as? String)
        #expect(try server.gallery(id)["name"] as? String == "Summer")
        // 200 characters (not bytes) fit; 201 do not; whitespace alone is empty.
        #expect(try create(String(repeating: "a", count: 200)).status == 201)
        #expect(try create(String(repeating: "é", count: 200)).status == 201)
        let emoji = String(repeating: "👩‍👩‍👧", count: 200)
        #expect(try create(emoji).status == 201)
        for bad: Any in [
            "", "   \n\t", String(repeating: "a", count: 201), " " + String(repeating: "b", count: 201) + " ",
        ] {
            let r = try create(bad)
            #expect(r.status == 400)
            #expect(r.json["code"] as? Int == 142, "\(r.text)")
        }
        // Wrong type, missing name.
        #expect(try create(5).json["code"] as? Int == 111)
        #expect(try server.json("POST", "/parse/classes/Gallery", [String: Any]()).json["code"] as? Int == 142)
        // Invalid UTF-8 and NUL are not valid names: the body is rejected as bad JSON (107).
        let invalidUTF8 = Data(#"{"name":"ab"#.utf8) + Data([0xC3, 0x28]) + Data(#""}"#.utf8)
        #expect(try server.request("POST", "/parse/classes/Gallery", body: invalidUTF8).json["code"] as? Int == 107)
        #expect(
            try server.request("POST", "/parse/classes/Gallery", body: Data(#"{"name":"a\u0000b"}"#.utf8)).json["code"]
                as? Int == 107)
        // Duplicates are allowed.
        #expect(try create("Summer").status == 201)
        let summers = try server.request(
            "GET", "/parse/classes/Gallery?count=1&limit=0&where=" + TestServer.queryValue(#"{"name":"Summer"}"#))
        #expect(summers.json["count"] as? Int == 2)

        // The same rules on rename, and a rejected rename changes nothing.
        for bad in ["", "  ", String(repeating: "c", count: 201)] {
            let r = try server.json("PUT", "/parse/classes/Gallery/\(id)", ["name": bad])
            #expect(r.json["code"] as? Int == 142, "\(r.text)")
        }
        #expect(try server.gallery(id)["name"] as? String == "Summer")
        #expect(try server.json("PUT", "/parse/classes/Gallery/\(id)", ["name": " Winter ❄️ "]).status == 200)
        #expect(try server.gallery(id)["name"] as? String == "Winter ❄️")
    }

    @Test func includePhoto_ExpandsItemsWithURLsAndAspectRatios_InOneQuery() throws {
        let server = try TestServer(workers: 1)
        defer { server.stop() }
        let wide = try server.uploadPhoto(try TestJPEG.make(width: 120, height: 60, seed: 11), name: "wide.jpg")
        let tall = try server.uploadPhoto(
            TestJPEG.withOrientation(try TestJPEG.make(width: 80, height: 40, seed: 12), 6), name: "tall.jpg")
        for id in [wide, tall] { #expect(try server.waitForProcessing(id) == "ready") }
        let gallery = try server.createGallery("Included")
        _ = try server.addedItem(gallery: gallery, photo: tall)
        _ = try server.addedItem(gallery: gallery, photo: wide, position: 0)

        let whereText = TestServer.jsonText(["gallery": TestServer.pointer("Gallery", gallery)])
        let r = try server.request(
            "GET", "/parse/classes/GalleryItem?where=\(TestServer.queryValue(whereText))&order=position&include=photo")
        #expect(r.status == 200, "\(r.text)")
        let results = try #require(r.json["results"] as? [[String: Any]])
        #expect(results.count == 2)
        #expect(results.map { $0["position"] as? Int } == [0, 1])
        let expanded = results.compactMap { $0["photo"] as? [String: Any] }
        #expect(expanded.count == 2)
        #expect(expanded.map { $0["objectId"] as? String } == [wide, tall])
        #expect(expanded.allSatisfy { $0["__type"] as? String == "Object" && $0["className"] as? String == "Photo" })
        #expect((expanded[0]["aspectRatio"] as? Double).map { abs($0 - 2.0) < 0.001 } == true)
        // Orientation 6: displayed as 40×80.
        #expect(expanded[1]["width"] as? Int == 40)
        #expect(expanded[1]["height"] as? Int == 80)
        #expect((expanded[1]["aspectRatio"] as? Double).map { abs($0 - 0.5) < 0.001 } == true)
        for photo in expanded {
            for file in ["thumbnail", "preview", "original"] {
                let url = try #require((photo[file] as? [String: Any])?["url"] as? String)
                let base = server.application.publicURL
                #expect(url.hasPrefix(base + "/bucket/"), "\(url)")
                let path = String(url.dropFirst(base.count))
                let asset = try server.request("GET", path, appID: nil)
                #expect(asset.status == 200, "\(file) \(url)")
                #expect(asset.header("Content-Type") == "image/jpeg")
            }
            #expect(photo["thumbnailWidth"] is Int)
            #expect(photo["previewHeight"] is Int)
        }
        // The gallery (not included) stays a pointer.
        #expect((results[0]["gallery"] as? [String: Any])?["__type"] as? String == "Pointer")

        // One statement, photos joined: no query per item.
        let query = try ParseQuery.find(
            ParseClassSchema.galleryItem,
            items: [("where", whereText), ("order", "position"), ("include", "photo"), ("count", "1")])
        let compiled = ParseSQLCompiler.compile(query)
        let select = try #require(compiled.select)
        #expect(select.sql.contains("join photos p on p.object_id = t.photo_id"))
        #expect(!select.sql.contains("select photo_id from gallery_items where"))
        // And it runs as that one statement against the real schema.
        let rows = try server.application.pool.query(select.sql, select.binds.postgresBinds)
        #expect(rows.count == 2)
    }

    @Test func trashedPhotos_LeaveItemsCountAndCover_AndComeBackOnRestore() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let photos = try server.insertPhotos(4)
        let (a, b, c, d) = (photos[0], photos[1], photos[2], photos[3])
        let gallery = try server.createGallery("Trash")
        let other = try server.createGallery("Other")
        var items: [String: String] = [:]
        for photo in [a, b, c] { items[photo] = try server.addedItem(gallery: gallery, photo: photo) }
        _ = try server.addedItem(gallery: other, photo: a)
        func cover(_ id: String) throws -> String? {
            (try server.gallery(id)["coverPhoto"] as? [String: Any])?["objectId"] as? String
        }
        #expect(try cover(gallery) == a)
        #expect(try server.gallery(gallery)["photoCount"] as? Int == 3)

        // Trash the cover photo: it leaves the items, the count and the cover of both galleries.
        #expect(try server.request("DELETE", "/parse/classes/Photo/\(a)").status == 200)
        #expect(try server.photoOrder(of: gallery) == [b, c])
        // Positions still count the hidden item (so it comes back where it was).
        #expect(try server.items(of: gallery).map(\.position) == [1, 2])
        #expect(try server.gallery(gallery)["photoCount"] as? Int == 2)
        #expect(try server.gallery(other)["photoCount"] as? Int == 0)
        #expect(try cover(gallery) == b)
        #expect(try cover(other) == nil)
        let whereText = TestServer.queryValue(TestServer.jsonText(["gallery": TestServer.pointer("Gallery", gallery)]))
        let counted = try server.request("GET", "/parse/classes/GalleryItem?count=1&limit=0&where=\(whereText)")
        #expect(counted.json["count"] as? Int == 2)
        // The hidden item can still be fetched by id, and moved: a drop onto c's position puts it after c.
        #expect(try server.request("GET", "/parse/classes/GalleryItem/\(items[a]!)").status == 200)
        let includedCover = try server.request("GET", "/parse/classes/Gallery/\(gallery)?include=coverPhoto")
        #expect((includedCover.json["coverPhoto"] as? [String: Any])?["objectId"] as? String == b)
        #expect((includedCover.json["coverPhoto"] as? [String: Any])?["__type"] as? String == "Object")
        // Adding another item counts; moving does not change the count.
        _ = try server.addedItem(gallery: gallery, photo: d, position: 0)
        #expect(try server.photoOrder(of: gallery) == [d, b, c])
        #expect(try server.gallery(gallery)["photoCount"] as? Int == 3)
        try server.expectConsistent(gallery)

        // Restore: back at its place, counted, the cover again in the other gallery.
        #expect(try server.json("PUT", "/parse/classes/Photo/\(a)", ["deletedAt": ["__op": "Delete"]]).status == 200)
        #expect(try server.photoOrder(of: gallery) == [d, a, b, c])
        #expect(try server.gallery(gallery)["photoCount"] as? Int == 4)
        #expect(try server.gallery(other)["photoCount"] as? Int == 1)
        #expect(try cover(other) == a)
        try server.expectConsistent(gallery)
        try server.expectConsistent(other)

        // Delete b for good (trash, then purge): its items go and the gaps close.
        #expect(try server.request("DELETE", "/parse/classes/Photo/\(b)").status == 200)
        #expect(try server.gallery(gallery)["photoCount"] as? Int == 3)
        #expect(try server.request("DELETE", "/parse/purge/Photo/\(b)").status == 200)
        #expect(try server.request("GET", "/parse/classes/GalleryItem/\(items[b]!)").status == 404)
        #expect(try server.photoOrder(of: gallery) == [d, a, c])
        #expect(try server.items(of: gallery).map(\.position) == [0, 1, 2])
        #expect(try server.gallery(gallery)["photoCount"] as? Int == 3)
        try server.expectConsistent(gallery)
        try server.expectConsistent(other)
    }

    @Test func purgeEndpoint_EmptiesRecentlyDeletedGalleries_WithTheMasterKeyOnly() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let photos = try server.insertPhotos(1)
        let live = try server.createGallery("Live")
        let trashed = try server.createGallery("Trashed")
        _ = try server.addedItem(gallery: trashed, photo: photos[0])
        _ = try server.addedItem(gallery: live, photo: photos[0])
        #expect(try server.request("DELETE", "/parse/classes/Gallery/\(trashed)").status == 200)
        #expect(try server.request("DELETE", "/parse/purge/Gallery", anonymous: true).status == 403)
        let purged = try server.request(
            "DELETE", "/parse/purge/Gallery", headers: ["X-Parse-Master-Key": TestServer.masterKey])
        #expect(purged.status == 200)
        #expect(try server.request("GET", "/parse/classes/Gallery/\(trashed)").status == 404)
        #expect(try server.request("GET", "/parse/classes/Gallery/\(live)").status == 200)
        #expect(try server.request("GET", "/parse/classes/Photo/\(photos[0])").status == 200)
        #expect(try server.photoOrder(of: live) == photos)
        let counters = try server.application.pool.query(
            "select name, n from row_counts where name like 'galleries_%' order by name"
        ).map { "\(try $0.decode(String.self, "name"))=\(try $0.decode(Int.self, "n"))" }
        #expect(counters == ["galleries_live=1", "galleries_public_live=0", "galleries_trashed=0"])
    }
}
