import Foundation
import GalleryTestSupport
import Testing

/// ToyPhotoGallery (voxels/ToyPhotoGallery) on galleryd the second way: the operator imports a
/// folder with `galleryd import`, defines the issue's `Resource` view in the config file and
/// makes the photos readable without a session (`public_read` and photo ACL `*` read); the app's
/// own requests (Parse iOS SDK headers, no session) then page through the photos, and both URLs
/// of every record load a JPEG. The binary as an operator runs it, against a real database.
@Suite(.serialized) struct ToyPhotoGalleryViewTests {
    static let sdkHeaders = [
        "X-Parse-Client-Version": "i1.17.3", "X-Parse-Installation-Id": "5d3f1a2b-0000-4000-8000-000000000001",
        "X-Parse-OS-Version": "12.1 (16B91)", "X-Parse-App-Build-Version": "1", "X-Parse-App-Display-Version": "1.0",
    ]
    static let master = ["X-Parse-Master-Key": TestKeys.masterKey]
    static let samples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("samples/photos").path
    static let config = """
        public_read = true
        [[views]]
        class = "Resource"
        source = "Photo"
        [views.fields]
        filename = "filename"
        thumbnailURLString = "thumbnail.url"
        fileURLString = "preview.url"
        """

    @Test func toyPhotoGallery_PagesImportedPhotos_ThroughTheResourceView() throws {
        let lock = try ClusterLock.acquireFileDescriptor()
        defer { close(lock) }
        let database = try ScratchDatabase(prefix: "galleryd_toy_view")
        defer { database.drop() }
        let storage = NSTemporaryDirectory() + "galleryd-toy-view-" + UUID().uuidString
        let file = storage + ".toml"
        try Self.config.write(toFile: file, atomically: true, encoding: .utf8)
        defer {
            try? FileManager.default.removeItem(atPath: file)
            try? FileManager.default.removeItem(atPath: storage)
        }
        let imported = try GalleryCommandRun.galleryd(
            ["import", "--process", "--config", file, "--storage-dir", storage, Self.samples], databaseURL: database.url
        )
        #expect(imported.status == 0, "\(imported.error)")
        let server = try ServeProcess(
            databaseURL: database.url, environment: ["GALLERYD_CONFIG": file, "GALLERYD_STORAGE_DIR": storage])
        defer { _ = try? server.stop() }

        // Until the operator grants it, the app's keys alone read nothing.
        let before = try server.send("GET", "/parse/classes/Resource?count=1&limit=0", headers: Self.sdkHeaders)
        #expect(before.status == 200 && before.json["count"] as? Int == 0, "\(before.json)")
        // The grant: every photo readable by anyone (ACL `*` read), with the master key.
        let photos = try server.send("GET", "/parse/classes/Photo?keys=objectId&limit=1000", headers: Self.master)
        let ids = (photos.json["results"] as? [[String: Any]] ?? []).compactMap { $0["objectId"] as? String }
        #expect(ids.count == 6)
        for id in ids {
            let granted = try server.send(
                "PUT", "/parse/classes/Photo/\(id)", #"{"ACL":{"*":{"read":true}}}"#, headers: Self.master)
            #expect(granted.status == 200, "\(granted.json)")
        }

        // The app: a count, then pages of 20 by -createdAt until a short one.
        let count = try server.send("GET", "/parse/classes/Resource?count=1&limit=0", headers: Self.sdkHeaders)
        #expect(count.status == 200 && count.json["count"] as? Int == ids.count, "\(count.json)")
        #expect((count.json["results"] as? [Any])?.isEmpty == true)
        var seen: [String] = []
        var skip = 0
        var lastCreated = "9999"
        while true {
            let page = try server.send(
                "GET", "/parse/classes/Resource?limit=20&order=-createdAt" + (skip > 0 ? "&skip=\(skip)" : ""),
                headers: Self.sdkHeaders)
            #expect(page.status == 200, "\(page.json)")
            let results = page.json["results"] as? [[String: Any]] ?? []
            for record in results {
                let id = try #require(record["objectId"] as? String)
                let createdAt = try #require(record["createdAt"] as? String)
                #expect(record["updatedAt"] is String && createdAt <= lastCreated)
                lastCreated = createdAt
                #expect((record["filename"] as? String)?.hasSuffix(".jpg") == true)
                for key in ["thumbnailURLString", "fileURLString"] {
                    let text = try #require(record[key] as? String)
                    let url = try #require(URL(string: text))
                    let image = try server.send("GET", url.path + (url.query.map { "?" + $0 } ?? ""))
                    #expect(image.status == 200 && image.body.prefix(2) == Data([0xFF, 0xD8]), "\(key) of \(id)")
                }
                seen.append(id)
            }
            if results.count < 20 { break }
            skip += 20
        }
        #expect(Set(seen) == Set(ids) && seen.count == ids.count)
        // The view is read-only, even for the app's writes.
        let write = try server.send("POST", "/parse/classes/Resource", #"{"filename":"x"}"#, headers: Self.sdkHeaders)
        #expect(write.json["code"] as? Int == 119)
    }
}
