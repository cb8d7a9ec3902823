import BlobStore
import Foundation
import Testing

@testable import GalleryApp

/// `galleryd storage migrate` copies the rendered display sizes too (`photo_sizes`), so the new
/// store serves them warm; a size evicted while the run goes is counted missing, not fatal.
@Suite(.serialized) struct StorageMigrationSizesTests {
    @Test func migrate_CopiesRenderedSizes_AndCountsAGoneOneMissing() throws {
        let server = try TestServer(workers: 1)
        defer { server.stop() }
        let id = try server.uploadPhoto(try TestJPEG.make(width: 800, height: 600, seed: 95))
        #expect(try server.waitForProcessing(id) == "ready")
        for size in ["t", "s"] {
            #expect(try server.request("GET", "/bucket/sizes/\(id)/\(size).jpg", appID: nil).status == 200)
        }
        let local = server.application.store
        let root = NSTemporaryDirectory() + "galleryd-migrate-sizes-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: root) }
        let destination = try LocalBlobStore(root: root)
        let migration = StorageMigration(
            pool: server.application.pool, source: local, destination: destination,
            spoolDirectory: destination.spoolDirectory)
        let keys = try migration.keys().map(\.rawValue)
        #expect(keys.contains("sizes/\(id)/t.jpg") && keys.contains("sizes/\(id)/s.jpg"))
        let report = try migration.run()
        #expect(report.total == 5 && report.copied == 5 && report.failed.isEmpty, "\(report)")
        let copied = try Data(contentsOf: URL(fileURLWithPath: destination.path(for: BlobKey("sizes/\(id)/s.jpg"))))
        #expect(copied == (try Data(contentsOf: URL(fileURLWithPath: local.path(for: BlobKey("sizes/\(id)/s.jpg"))))))
        // Listed but gone from the source (evicted meanwhile): missing, the rest skipped.
        try FileManager.default.removeItem(atPath: local.path(for: BlobKey("sizes/\(id)/t.jpg")))
        let again = try migration.run()
        #expect(again.missing == 1 && again.skipped == 4 && again.failed.isEmpty, "\(again)")
    }
}
