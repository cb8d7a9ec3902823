import Foundation
import Testing

@testable import GalleryApp

/// Recently Deleted retention: photos and galleries trashed longer than `trash_retention_days`
/// are purged with their blobs; nothing live or still within the retention is touched.
@Suite struct GalleryRetentionTests {
    /// The blob keys of a photo row: original, thumbnail, preview (those that are set).
    static func blobKeys(_ server: TestServer, _ photo: String) throws -> [String] {
        let row = try #require(
            try server.application.pool.query(
                "select original_key, thumbnail_key, preview_key from photos where object_id = $1", [photo]
            ).first)
        return try ["original_key", "thumbnail_key", "preview_key"].compactMap { try row.decode(String?.self, $0) }
    }

    /// Moves a trashed row's `deleted_at` `days` days into the past.
    static func backdate(_ server: TestServer, _ table: String, _ objectId: String, days: Int) throws {
        let updated = try server.application.pool.query(
            "update \(table) set deleted_at = now() - make_interval(days => $2::int) where object_id = $1 and deleted_at is not null",
            [objectId, days])
        #expect(updated.affectedRows == 1)
    }

    /// Whether the bucket serves `key`.
    static func served(_ server: TestServer, _ key: String) throws -> Bool {
        let status = try server.request("GET", "/bucket/\(key)", appID: nil).status
        #expect(status == 200 || status == 404)
        return status == 200
    }

    @Test func retentionDays_DefaultTo30() {
        #expect(GalleryConfiguration().trashRetentionDays == 30)
    }

    @Test func purge_RemovesPhotosAndGalleriesTrashedLongerThanRetention_WithTheirBlobs_AndNothingElse() throws {
        let server = try TestServer(workers: 1)
        defer { server.stop() }
        var uploaded: [String] = []
        for seed in 21...24 {
            uploaded.append(
                try server.uploadPhoto(
                    try TestJPEG.make(width: 72, height: 48, seed: UInt64(seed)), name: "r\(seed).jpg"))
        }
        for id in uploaded { #expect(try server.waitForProcessing(id) == "ready") }
        let (expired, recent, kept, keptToo) = (uploaded[0], uploaded[1], uploaded[2], uploaded[3])
        let rows = try server.insertPhotos(3)
        let (x, y, expiredRow) = (rows[0], rows[1], rows[2])

        let live = try server.createGallery("Live")
        let oldTrash = try server.createGallery("Old trash")
        let newTrash = try server.createGallery("New trash")
        for photo in [x, expired, y, kept] { _ = try server.addedItem(gallery: live, photo: photo) }
        for photo in [kept, keptToo, expired] { _ = try server.addedItem(gallery: oldTrash, photo: photo) }
        _ = try server.addedItem(gallery: newTrash, photo: keptToo)

        for photo in [expired, recent, expiredRow] {
            #expect(try server.request("DELETE", "/parse/classes/Photo/\(photo)").status == 200)
        }
        for gallery in [oldTrash, newTrash] {
            #expect(try server.request("DELETE", "/parse/classes/Gallery/\(gallery)").status == 200)
        }
        try Self.backdate(server, "photos", expired, days: 31)
        try Self.backdate(server, "photos", expiredRow, days: 45)
        try Self.backdate(server, "photos", recent, days: 29)
        try Self.backdate(server, "galleries", oldTrash, days: 31)
        try Self.backdate(server, "galleries", newTrash, days: 2)
        let expiredKeys = try Self.blobKeys(server, expired)
        #expect(expiredKeys.count == 3)
        let survivingKeys = try [recent, kept, keptToo].flatMap { try Self.blobKeys(server, $0) }
        for key in expiredKeys + survivingKeys { #expect(try Self.served(server, key), "\(key)") }
        let expiredChecksum = try server.application.pool.query(
            "select checksum from photos where object_id = $1", [expired]
        )
        .first!.decode(String.self, "checksum")

        let purged = try server.application.trash.purge(olderThanDays: 30)
        #expect(purged.photos == 2)
        #expect(purged.galleries == 1)

        // The expired photos are gone, with every blob and the uploaded file's row.
        for photo in [expired, expiredRow] {
            #expect(try server.request("GET", "/parse/classes/Photo/\(photo)").status == 404)
        }
        for key in expiredKeys {
            #expect(try !Self.served(server, key), "\(key)")
            #expect(!FileManager.default.fileExists(atPath: server.application.store.root + "/" + key))
        }
        #expect(
            try server.application.pool.query("select 1 from files where checksum = $1", [expiredChecksum]).count == 0)
        // Everything else stays: the recent trash, live photos (also those of the purged gallery).
        for photo in [recent, kept, keptToo, x, y] {
            #expect(try server.request("GET", "/parse/classes/Photo/\(photo)").status == 200)
        }
        for key in survivingKeys { #expect(try Self.served(server, key), "\(key)") }
        #expect(
            try server.application.pool.query("select count(*)::bigint as n from files").first!.decode(Int.self, "n")
                == 3)
        // The old trashed gallery is gone with its items, the recent one stays in Recently Deleted.
        #expect(try server.request("GET", "/parse/classes/Gallery/\(oldTrash)").status == 404)
        #expect(try server.storedItems(of: oldTrash).isEmpty)
        #expect(try server.gallery(newTrash)["deletedAt"] != nil)
        // The live gallery lost the purged photo's item, with no hole in its positions.
        #expect(try server.storedItems(of: live).map(\.photo) == [x, y, kept])
        try server.expectConsistent(live)
        try server.expectConsistent(newTrash)
        #expect(try server.gallery(live)["photoCount"] as? Int == 3)
        // The counters follow.
        let counters = try server.application.pool.query("select name, n from row_counts order by name")
            .map { "\(try $0.decode(String.self, "name"))=\(try $0.decode(Int.self, "n"))" }
        #expect(
            counters == [
                "galleries_live=1", "galleries_public_live=0", "galleries_trashed=1", "photos_live=4",
                "photos_trashed=1",
            ])

        // A second purge finds nothing more.
        let again = try server.application.trash.purge(olderThanDays: 30)
        #expect(again.photos == 0 && again.galleries == 0)
    }

    @Test func workerPool_PurgesTrashOlderThanTheConfiguredRetention_WhenItStarts() throws {
        let server = try TestServer(workers: 0) { $0.trashRetentionDays = 7 }
        defer { server.stop() }
        let photos = try server.insertPhotos(3)
        let gallery = try server.createGallery("Kept")
        let oldGallery = try server.createGallery("Old")
        for photo in photos { _ = try server.addedItem(gallery: gallery, photo: photo) }
        for photo in photos.prefix(2) {
            #expect(try server.request("DELETE", "/parse/classes/Photo/\(photo)").status == 200)
        }
        #expect(try server.request("DELETE", "/parse/classes/Gallery/\(oldGallery)").status == 200)
        try Self.backdate(server, "photos", photos[0], days: 8)
        try Self.backdate(server, "photos", photos[1], days: 6)
        try Self.backdate(server, "galleries", oldGallery, days: 8)

        let workers = server.application.makeWorkerPool(threads: 1)
        workers.start()
        defer { workers.stop() }
        let deadline = Date().addingTimeInterval(30)
        func purged() throws -> Bool {
            try server.request("GET", "/parse/classes/Photo/\(photos[0])").status == 404
                && server.request("GET", "/parse/classes/Gallery/\(oldGallery)").status == 404
        }
        while Date() < deadline, try !purged() { Thread.sleep(forTimeInterval: 0.05) }
        #expect(try server.request("GET", "/parse/classes/Photo/\(photos[0])").status == 404)
        #expect(try server.request("GET", "/parse/classes/Photo/\(photos[1])").status == 200)
        #expect(try server.request("GET", "/parse/classes/Gallery/\(oldGallery)").status == 404)
        #expect(try server.storedItems(of: gallery).map(\.photo) == [photos[1], photos[2]])
        try server.expectConsistent(gallery)
        #expect(try server.gallery(gallery)["photoCount"] as? Int == 1)
    }
}
