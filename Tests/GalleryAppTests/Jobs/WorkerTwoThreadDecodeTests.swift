import Foundation
import Testing

@testable import GalleryApp
@testable import Imaging

/// A progressive photo large enough for the two-thread decode (decision 055) is processed from
/// its stored file; damaged, it fails the job at once with the one-thread decode's error.
@Suite(.serialized) struct WorkerTwoThreadDecodeTests {
    /// A progressive colour JPEG above the two-thread threshold.
    static func largeProgressive(seed: UInt64) throws -> [UInt8] {
        let jpeg = try TestJPEG.make(width: 1100, height: 800, seed: seed, quality: 97)
        #expect(jpeg.count >= JPEGDecoder.twoThreadMinimumBytes)
        return jpeg
    }

    /// Uploads `jpeg`, then replaces the stored original by `stored` (a damaged disk: the upload
    /// itself only reads the header and the end marker) and runs the job.
    static func process(_ server: TestServer, _ jpeg: [UInt8], stored: [UInt8]) throws -> (
        WorkerTests.JobRow, [String: Any]
    ) {
        let id = try server.uploadPhoto(jpeg)
        for name in server.blobFiles(under: "originals") {
            try Data(stored).write(to: URL(fileURLWithPath: server.storage + "/originals/" + name))
        }
        let pool = server.application.makeWorkerPool(threads: 1)
        try WorkerTests.drainUntilFinished(server, id, pool: pool)
        return (try WorkerTests.job(server, id), try server.request("GET", "/parse/classes/Photo/\(id)").json)
    }

    @Test func worker_ProcessesALargeProgressivePhoto() throws {
        let server = try TestServer(workers: 0) { UploadTests.smallDerivatives(&$0) }
        defer { server.stop() }
        let jpeg = try Self.largeProgressive(seed: 41)
        let (job, photo) = try Self.process(server, jpeg, stored: jpeg)
        #expect(job.state == "done")
        #expect(photo["status"] as? String == "ready")
        #expect(!server.blobFiles(under: "thumbnails").isEmpty)
    }

    @Test func worker_FailsAtOnce_WhenALargeProgressivePhotoIsCutOrCorrupt() throws {
        let server = try TestServer(workers: 0) { UploadTests.smallDerivatives(&$0) }
        defer { server.stop() }
        let jpeg = try Self.largeProgressive(seed: 42)
        var corrupt = jpeg
        corrupt[jpeg.count * 3 / 4] = 0xFF
        corrupt[jpeg.count * 3 / 4 + 1] = 0xD9  // an EOI inside a late (chroma) scan
        for (stored, expected) in [(Array(jpeg.prefix(jpeg.count * 2 / 3)), "truncated"), (corrupt, "corrupt")] {
            let (job, photo) = try Self.process(server, TestJPEG.withOrientation(jpeg, 1), stored: stored)
            #expect(job.state == "failed")
            #expect(job.attempts == 1, "a damaged image is not retried")
            #expect(photo["status"] as? String == "failed")
            #expect((photo["error"] as? String)?.contains(expected) == true, "\(photo)")
        }
    }
}
