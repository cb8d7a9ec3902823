import BlobStore
import Crypto
import Foundation
import Postgres
import Testing

@testable import GalleryApp

/// Nothing stays on disk that no row refers to (issue #13, item 6): a worker that finishes a photo
/// purged meanwhile removes what it wrote, and the orphan collector removes unattached uploads past
/// `orphan_grace_hours` and derivatives of vanished photos, counting them in /metrics.
@Suite struct OrphanTests {
    static func exists(_ server: TestServer, _ key: String) -> Bool {
        FileManager.default.fileExists(atPath: server.storage + "/" + key)
    }

    @Test func worker_RemovesItsDerivatives_WhenThePhotoVanishedBeforeItsCommit() throws {
        let server = try TestServer(workers: 0) { UploadTests.smallDerivatives(&$0) }
        defer { server.stop() }
        let id = try server.uploadPhoto(try TestJPEG.make(width: 80, height: 60, seed: 41))
        // Stands in for a purge that commits while the job runs: the worker's final UPDATE finds no row.
        try server.application.pool.execute(
            """
            create function vanish() returns trigger language plpgsql as $$ begin return null; end $$;
            create trigger vanish before update on photos for each row when (new.status = 'ready') execute function vanish();
            """)
        let workers = server.application.makeWorkerPool(threads: 1)
        #expect(workers.drain() == 1)
        #expect(!Self.exists(server, "thumbnails/\(id).jpg"))
        #expect(!Self.exists(server, "previews/\(id).jpg"))
    }

    @Test func worker_LeavesNoDerivatives_WhenPhotosArePurgedWhileProcessed() throws {
        let server = try TestServer(workers: 2) { UploadTests.smallDerivatives(&$0) }
        defer { server.stop() }
        var ids: [String] = []
        for seed in 0..<12 {
            let id = try server.uploadPhoto(try TestJPEG.make(width: 640, height: 480, seed: UInt64(300 + seed)))
            ids.append(id)
            #expect(try server.request("DELETE", "/parse/classes/Photo/\(id)").status == 200)
            usleep(UInt32.random(in: 0...20_000))
            let purge = try server.request("DELETE", "/parse/purge/Photo/\(id)")
            #expect(purge.status == 200, "\(purge.text)")
        }
        // Let any job that was running finish.
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline, server.application.metrics.jobsRunning.value() > 0 { usleep(20_000) }
        usleep(200_000)
        for id in ids {
            #expect(!Self.exists(server, "thumbnails/\(id).jpg"), "\(id)")
            #expect(!Self.exists(server, "previews/\(id).jpg"), "\(id)")
        }
        #expect(try server.application.pool.query("select count(*) from files")[0].decode(Int.self, 0) == 0)
    }

    @Test func collector_RemovesOldUnattachedUploads_AndDerivativesOfVanishedPhotos_Only() throws {
        let server = try TestServer(workers: 0) { UploadTests.smallDerivatives(&$0) }
        defer { server.stop() }
        let pool = server.application.pool
        // A photo with its derivatives: kept.
        let live = try server.uploadPhoto(try TestJPEG.make(width: 80, height: 60, seed: 51))
        #expect(server.application.makeWorkerPool(threads: 1).drain() == 1)
        #expect(Self.exists(server, "thumbnails/\(live).jpg"))
        // Two uploads never attached: one a day and more old, one fresh.
        func upload(_ seed: UInt64) throws -> String {
            let file = try server.request(
                "POST", "/parse/files/u.jpg", body: Data(try TestJPEG.make(width: 40, height: 30, seed: seed)),
                headers: ["Content-Type": "image/jpeg"])
            #expect(file.status == 201)
            return try #require(file.json["name"] as? String)
        }
        let old = try upload(52)
        let fresh = try upload(53)
        try pool.query(
            "update file_uploads set uploaded_at = now() - interval '25 hours' where checksum || '.jpg' = $1", [old])
        try pool.query("update files set created_at = now() - interval '25 hours' where name = $1", [old])
        // Derivatives of a photo row that is gone (a crash between a purge's commit and its unlinks).
        let hourAgo = Date().addingTimeInterval(-3600)
        for key in ["thumbnails/zzzzzzzzzz.jpg", "previews/zzzzzzzzzz.jpg"] {
            #expect(FileManager.default.createFile(atPath: server.storage + "/" + key, contents: Data([0xFF, 0xD8])))
            try FileManager.default.setAttributes(
                [.modificationDate: hourAgo], ofItemAtPath: server.storage + "/" + key)
        }
        // One written just now is left for the worker writing it.
        #expect(
            FileManager.default.createFile(
                atPath: server.storage + "/thumbnails/yyyyyyyyyy.jpg", contents: Data([0xFF])))

        let workers = server.application.makeWorkerPool(threads: 1)
        let collected = workers.collectOrphans()
        #expect(collected == OrphanCollector.Collected(uploads: 1, derivatives: 2))
        #expect(!Self.exists(server, "originals/\(old)"))
        #expect(try pool.query("select 1 from files where name = $1", [old]).count == 0)
        #expect(Self.exists(server, "originals/\(fresh)"))
        #expect(!Self.exists(server, "thumbnails/zzzzzzzzzz.jpg"))
        #expect(!Self.exists(server, "previews/zzzzzzzzzz.jpg"))
        #expect(Self.exists(server, "thumbnails/yyyyyyyyyy.jpg"))
        #expect(Self.exists(server, "thumbnails/\(live).jpg"))
        #expect(Self.exists(server, "previews/\(live).jpg"))
        #expect(try server.request("GET", "/parse/classes/Photo/\(live)").status == 200)
        let metrics = try server.request("GET", "/metrics", headers: ["X-Parse-Master-Key": TestServer.masterKey]).text
        #expect(metrics.contains("galleryd_orphans_removed_total{kind=\"upload\"} 1"))
        #expect(metrics.contains("galleryd_orphans_removed_total{kind=\"derivative\"} 2"))

        // The fresh upload, attached later, is a photo like any other; nothing more to collect.
        #expect(
            try server.json("POST", "/parse/classes/Photo", ["original": ["__type": "File", "name": fresh]]).status
                == 201)
        try pool.query("update files set created_at = now() - interval '30 hours'")
        #expect(workers.collectOrphans() == OrphanCollector.Collected())
        #expect(Self.exists(server, "originals/\(fresh)"))
    }
    @Test func collector_RemovesOldOriginalsThatNoFilesRowNames_AndKeepsRecordedOrFreshOnes() throws {
        // A kill -9 between an upload's blob write and its row's commit (bench/faults.sh's kill rounds
        // with HEICs left 2 such originals in 20 rounds): the blob is on disk, the row rolled back.
        let server = try TestServer(workers: 0) { UploadTests.smallDerivatives(&$0) }
        defer { server.stop() }
        let formats = try UploadFormatTests.allFormats()
        let store = server.application.store
        func original(_ bytes: [UInt8], _ ext: String) throws -> String {
            let sha = SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
            try store.put(try BlobKey.original(sha256: sha, extension: ext), bytes: bytes)
            return "\(sha).\(ext)"
        }
        let dayAgo = Date().addingTimeInterval(-25 * 3600)
        let lost = try original(try #require(formats["heic"]), "heic")
        let lostPNG = try original(try #require(formats["png"]), "png")
        let fresh = try original(try #require(formats["webp"]), "webp")
        for name in [lost, lostPNG] {
            try FileManager.default.setAttributes(
                [.modificationDate: dayAgo], ofItemAtPath: server.storage + "/originals/" + name)
        }
        // An old original with its row and photo, uploaded the ordinary way: kept.
        let avif = try #require(formats["avif"])
        let live = try server.uploadPhoto(avif, name: "live.avif")
        let liveName = try original(avif, "avif")
        try FileManager.default.setAttributes(
            [.modificationDate: dayAgo], ofItemAtPath: server.storage + "/originals/" + liveName)

        let workers = server.application.makeWorkerPool(threads: 1)
        #expect(workers.collectOrphans() == OrphanCollector.Collected(uploads: 2, derivatives: 0))
        #expect(!Self.exists(server, "originals/\(lost)"))
        #expect(!Self.exists(server, "originals/\(lostPNG)"))
        #expect(Self.exists(server, "originals/\(fresh)"), "younger than orphan_grace_hours")
        #expect(Self.exists(server, "originals/\(liveName)"))
        #expect(try server.application.pool.query("select 1 from files where name = $1", [lost]).isEmpty)
        #expect(try server.application.pool.query("select count(*) from files")[0].decode(Int.self, 0) == 1)
        // The same bytes uploaded again are stored again, whole.
        let again = try server.request(
            "POST", "/parse/files/again.heic", body: Data(try #require(formats["heic"])),
            headers: ["Content-Type": "image/heic"])
        #expect(again.status == 201 && again.json["name"] as? String == lost, "\(again.text)")
        #expect(
            FileManager.default.contents(atPath: server.storage + "/originals/" + lost) == Data(formats["heic"]!))
        #expect(workers.drain() == 1)
        #expect(try server.request("GET", "/parse/classes/Photo/\(live)").json["status"] as? String == "ready")
    }
}
