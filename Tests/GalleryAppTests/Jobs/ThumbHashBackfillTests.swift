import Foundation
import Imaging
import Testing

@testable import GalleryApp

/// Photos processed before migration 0023 get their ThumbHash from the worker's background pass,
/// not in a request: a find answers at once (without one), the hash appears after the pass, a
/// photo whose thumbnail is unreadable is skipped, and the pass ends once none is left.
@Suite(.serialized) final class ThumbHashBackfillTests {
    let server: TestServer
    let photos: [String]

    init() throws {
        let fixture = try TestServer.withProcessedPhotos(
            [(800, 600, 71), (600, 800, 72), (640, 640, 73)].map { width, height, seed in
                try TestJPEG.make(width: width, height: height, seed: UInt64(seed))
            })
        server = fixture.server
        photos = fixture.photos
    }

    deinit { server.stop() }

    func hash(_ id: String) throws -> String? {
        try server.application.pool.query("select thumbhash from photos where object_id = $1", [id])[0]
            .decode(String?.self, "thumbhash")
    }

    func backfill() -> ThumbHashBackfill {
        let application = server.application
        return ThumbHashBackfill(
            pool: application.pool, store: application.blobs, spoolDirectory: application.store.spoolDirectory,
            limits: ImageLimits(), logger: application.logger)
    }

    @Test func backfill_HashesOldPhotos_SkipsUnreadableOnes_AndFinishes() throws {
        let computed = try photos.map { try #require(try hash($0)) }
        // As before 0023: no hashes; one photo's thumbnail is gone from the store.
        try server.application.pool.query("update photos set thumbhash = null")
        let broken = photos[2]
        let brokenKey = try server.application.pool.query(
            "select thumbnail_key from photos where object_id = $1", [broken])[0].decode(String.self, "thumbnail_key")
        try FileManager.default.removeItem(atPath: server.storage + "/" + brokenKey)
        // A find does not wait for it: the records answer, without a thumbhash.
        let found = try server.request("GET", "/parse/classes/Photo?keys=thumbhash")
        let records = try #require(found.json["results"] as? [[String: Any]])
        #expect(records.count == 3 && records.allSatisfy { $0["thumbhash"] == nil || $0["thumbhash"] is NSNull })

        let pass = backfill()
        #expect(try pass.runBatch(limit: 2) + pass.runBatch(limit: 2) == 2)
        #expect(!pass.isFinished)
        #expect(try pass.runBatch() == 0 && pass.isFinished, "nothing left but the skipped photo")
        #expect(try hash(broken) == nil)
        for (index, id) in photos.prefix(2).enumerated() {
            let text = try #require(try hash(id))
            let bytes = try #require(Data(base64Encoded: text))
            let made = try #require(ThumbHash.aspectRatio([UInt8](bytes)))
            let original = try #require(ThumbHash.aspectRatio([UInt8](Data(base64Encoded: computed[index])!)))
            #expect(abs(made - original) < 0.05, "the same placeholder shape as the worker's")
        }
        let record = try server.request("GET", "/parse/classes/Photo/\(photos[0])")
        #expect(record.json["thumbhash"] as? String == (try hash(photos[0])))
    }

    @Test func worker_RunsTheBackfill_WhenItsQueueIsEmpty() throws {
        try server.application.pool.query("update photos set thumbhash = null")
        let pool = server.application.makeWorkerPool(threads: 1)
        pool.start()
        defer { pool.stop() }
        let deadline = Date().addingTimeInterval(30)
        while try photos.contains(where: { try hash($0) == nil }), Date() < deadline {
            Thread.sleep(forTimeInterval: 0.05)
        }
        #expect(try photos.allSatisfy { try hash($0) != nil })
    }
}
