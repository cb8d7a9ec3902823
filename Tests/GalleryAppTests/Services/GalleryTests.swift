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
