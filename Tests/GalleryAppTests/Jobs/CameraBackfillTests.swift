import Foundation
import Imaging
import Testing

@testable import GalleryApp

/// Photos stored before migration 0027 get their camera from the worker's background pass over
/// their originals, not in a request: a find answers at once (without one), the camera appears
/// after the pass, an original that is missing or unreadable is marked checked and skipped, and
/// neither this pass nor the next process's reads any of them again.
@Suite(.serialized) final class CameraBackfillTests {
    let server: TestServer
    /// Canon, Apple and Nikon cameras, then a photo without one.
    let photos: [String]

    init() throws {
        let cameras = try [
            (81, "Canon", "Canon EOS R5"), (82, "Apple", "iPhone 15 Pro"), (83, "NIKON CORPORATION", "NIKON Z 8"),
        ].map { seed, make, model in
            let jpeg = try TestJPEG.make(width: 320, height: 240, seed: UInt64(seed))
            return TestJPEG.withCamera(jpeg, make: Array(make.utf8), model: Array(model.utf8))
        }
        let fixture = try TestServer.withProcessedPhotos(cameras + [TestJPEG.make(width: 320, height: 240, seed: 84)])
        server = fixture.server
        photos = fixture.photos
    }

    deinit { server.stop() }

    func camera(_ id: String) throws -> (make: String?, model: String?, checked: Bool?) {
        let row = try server.application.pool.query(
            "select camera_make, camera_model, camera_checked from photos where object_id = $1", [id])[0]
        return (
            try row.decode(String?.self, "camera_make"), try row.decode(String?.self, "camera_model"),
            try row.decode(Bool?.self, "camera_checked")
        )
    }

    func backfill() -> CameraBackfill {
        let application = server.application
        return CameraBackfill(
            pool: application.pool, store: application.blobs, spoolDirectory: application.store.spoolDirectory,
            limits: ImageLimits(), maxOriginalBytes: 64 << 20, logger: application.logger)
    }

    /// As photos stored before 0027 are once 0029 has run: no camera, none checked.
    func forgetCameras() throws {
        try server.application.pool.query(
            "update photos set camera_make = null, camera_model = null, camera_checked = null")
    }

    /// Points the photo at an original of its own (uploads of the same bytes share one blob, and
    /// other tests upload these): `bytes`, or none at all.
    func replaceOriginal(of id: String, with bytes: [UInt8]?) throws {
        let key = "originals/backfill-test-\(id.lowercased()).jpg"
        if let bytes { try Data(bytes).write(to: URL(fileURLWithPath: server.storage + "/" + key)) }
        try server.application.pool.query("update photos set original_key = $2 where object_id = $1", [id, key])
    }

    @Test func newPhotos_AreChecked_AndTheBackfillHasNothingToDo() throws {
        #expect(try camera(photos[0]) == ("Canon", "Canon EOS R5", true))
        #expect(try camera(photos[3]) == (nil, nil, true))
        let pass = backfill()
        #expect(try pass.runBatch() == 0 && pass.isFinished)
    }

    @Test func backfill_ReadsOldPhotosCameras_SkipsMissingAndUnreadableOriginals_AndFinishes() throws {
        try forgetCameras()
        let (missing, unreadable) = (photos[1], photos[2])
        try replaceOriginal(of: missing, with: nil)
        try replaceOriginal(of: unreadable, with: Array("not an image at all".utf8))
        // A find does not wait for it: the records answer, without a camera.
        let found = try server.request("GET", "/parse/classes/Photo?keys=cameraMake,cameraModel")
        let records = try #require(found.json["results"] as? [[String: Any]])
        #expect(records.count == 4 && records.allSatisfy { $0["cameraMake"] == nil && $0["cameraModel"] == nil })

        let pass = backfill()
        #expect(try pass.runBatch(limit: 3) + pass.runBatch(limit: 3) == 4, "every photo checked once")
        #expect(!pass.isFinished)
        #expect(try pass.runBatch() == 0 && pass.isFinished)
        #expect(try camera(photos[0]) == ("Canon", "Canon EOS R5", true))
        #expect(try camera(photos[3]) == (nil, nil, true), "no camera in its EXIF: checked, still none")
        #expect(try camera(missing) == (nil, nil, true))
        #expect(try camera(unreadable) == (nil, nil, true))
        let record = try server.request("GET", "/parse/classes/Photo/\(photos[0])")
        #expect(record.json["cameraMake"] as? String == "Canon")
        #expect(record.json["cameraModel"] as? String == "Canon EOS R5")
        // The next process's pass reads none of them again.
        let next = backfill()
        #expect(try next.runBatch() == 0 && next.isFinished)
    }

    @Test func worker_RunsTheBackfill_WhenItsQueueIsEmpty() throws {
        try forgetCameras()
        let pool = server.application.makeWorkerPool(threads: 1)
        pool.start()
        defer { pool.stop() }
        let deadline = Date().addingTimeInterval(30)
        while try photos.contains(where: { try camera($0).checked == nil }), Date() < deadline {
            Thread.sleep(forTimeInterval: 0.05)
        }
        #expect(try camera(photos[1]) == ("Apple", "iPhone 15 Pro", true))
        #expect(try camera(photos[2]) == ("NIKON CORPORATION", "NIKON Z 8", true))
        #expect(try photos.allSatisfy { try camera($0).checked == true })
    }
}
