import Foundation
import Testing

@testable import GalleryApp

/// A gallery's photos: included with their URLs and aspect ratios in one query, and trashed photos
/// leaving the item count and cover until they are restored.
extension GalleryTests {
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
}
