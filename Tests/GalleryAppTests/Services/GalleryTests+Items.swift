import Foundation
import Testing

@testable import GalleryApp

/// A gallery's items: moves, inserts at a position, duplicates (137), pointers to missing or trashed
/// objects (101, 119), and what a GalleryItem PUT may change (105).
extension GalleryTests {
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
            // GalleryItem has no ACL (bench/fuzz found this a 500 from a column the table lacks).
            ["ACL": ["*": ["read": true]]],
            ["position": 1, "ACL": ["*": ["read": true]]],
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
        // A create with an ACL (what an SDK with a default ACL sends): refused before the item is
        // made, not a 500 after it.
        let withACL = try server.json(
            "POST", "/parse/classes/GalleryItem",
            [
                "gallery": TestServer.pointer("Gallery", other), "photo": TestServer.pointer("Photo", photos[2]),
                "ACL": ["*": ["read": true]],
            ])
        #expect(withACL.status == 400 && withACL.json["code"] as? Int == 105, "\(withACL.text)")
        #expect((withACL.json["error"] as? String)?.contains("ACL") == true, "\(withACL.text)")
        // Nothing moved, nothing was re-pointed, nothing was added.
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
}
