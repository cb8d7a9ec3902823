import BlobStore
import Foundation
import Testing
@testable import GalleryApp

/// `galleryd storage migrate`: local → S3 cut off midway and resumed, a damaged copy found and
/// copied again, and back from S3 into an empty local directory — against moto, checked with boto3.
@Suite(.enabled(if: S3TestEnvironment.isProvided, S3TestEnvironment.skipReason), .serialized)
struct StorageMigrationTests {
    @Test func migrate_LocalToS3_IsResumable_Verified_AndReversible() throws {
        let server = try TestServer(workers: 1) { configuration in
            configuration.thumbnailSize = 32
            configuration.previewSize = 96
        }
        defer { server.stop() }
        for seed in [81, 82] {
            let id = try server.uploadPhoto(try TestJPEG.make(width: 96, height: 64, seed: UInt64(seed)), name: "m\(seed).jpg")
            #expect(try server.waitForProcessing(id) == "ready")
        }
        let prefix = "migrate-\(UUID().uuidString.prefix(8))/"
        var s3Configuration = server.application.configuration
        S3TestEnvironment.configure(&s3Configuration, prefix: prefix)
        let s3 = try #require(try GalleryApplication.makeBlobStore(configuration: s3Configuration, local: server.application.store) as? S3BlobStore)
        let local = server.application.store
        let toS3 = StorageMigration(pool: server.application.pool, source: local, destination: s3, spoolDirectory: local.spoolDirectory)

        // Two originals, two thumbnails, two previews. The first run is cut off after two copies.
        let first = try toS3.run(limit: 2)
        #expect(first.total == 6)
        #expect(first.copied == 2)
        #expect(try S3TestEnvironment.boto3Keys(prefix: prefix).count == 2)
        let resumed = try toS3.run()
        #expect(resumed.copied == 4)
        #expect(resumed.skipped == 2)
        #expect(resumed.failed.isEmpty)
        let keys = try toS3.keys()
        #expect(try S3TestEnvironment.boto3Keys(prefix: prefix) == keys.map { prefix + $0.rawValue })

        // A copy damaged in the bucket (same size, other bytes) fails verification and is copied again.
        let damaged = keys.first { $0.rawValue.hasPrefix("thumbnails/") }!
        let size = Int(try #require(try local.info(damaged)).size)
        try s3.put(damaged, bytes: [UInt8](repeating: 0x55, count: size))
        let repaired = try toS3.run()
        #expect(repaired.copied == 1)
        #expect(repaired.skipped == 5)
        #expect(try s3.bytes(damaged) == Array(try Data(contentsOf: URL(fileURLWithPath: local.path(for: damaged)))))

        // And back, into an empty directory.
        let root = NSTemporaryDirectory() + "galleryd-migrate-back-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: root) }
        let back = try LocalBlobStore(root: root)
        let toLocal = StorageMigration(pool: server.application.pool, source: s3, destination: back, spoolDirectory: back.spoolDirectory)
        let returned = try toLocal.run()
        #expect(returned.copied == 6)
        #expect(returned.failed.isEmpty)
        for key in keys {
            #expect(try Data(contentsOf: URL(fileURLWithPath: back.path(for: key))) == Data(contentsOf: URL(fileURLWithPath: local.path(for: key))))
        }
        #expect(try toLocal.run().skipped == 6)
        try s3.delete(keys)
    }

    @Test func migrateCommand_CopiesInBatches_AndResumes() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        for seed in [91, 92, 93] {
            _ = try server.uploadPhoto(try TestJPEG.make(width: 48, height: 32, seed: UInt64(seed)), name: "c\(seed).jpg")
        }
        let prefix = "cli-\(UUID().uuidString.prefix(8))/"
        let s3Arguments = [
            "--to", "s3",
        ]
        func run(_ extra: [String]) throws -> (Int32, String) {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: try ImportTests.galleryd())
            process.arguments = ["storage", "migrate"] + s3Arguments + extra
            var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("GALLERYD_") || $0.key.hasPrefix("GALLERYD_TEST_") }
            environment["DATABASE_URL"] = server.application.configuration.databaseURL
            environment["GALLERYD_STORAGE_DIR"] = server.storage
            environment["GALLERYD_S3_ENDPOINT"] = S3TestEnvironment.value("GALLERYD_TEST_S3_ENDPOINT")
            environment["GALLERYD_S3_BUCKET"] = S3TestEnvironment.value("GALLERYD_TEST_S3_BUCKET") ?? "galleryd-test"
            environment["GALLERYD_S3_ACCESS_KEY_ID"] = S3TestEnvironment.value("GALLERYD_TEST_S3_ACCESS_KEY")
            environment["GALLERYD_S3_SECRET_ACCESS_KEY"] = S3TestEnvironment.value("GALLERYD_TEST_S3_SECRET_KEY")
            environment["GALLERYD_S3_PREFIX"] = prefix
            process.environment = environment
            let out = Pipe()
            process.standardOutput = out
            process.standardError = FileHandle.nullDevice
            try process.run()
            let data = out.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return (process.terminationStatus, String(decoding: data, as: UTF8.self))
        }
        let first = try run(["--limit", "1"])
        #expect(first.0 == 0)
        #expect(first.1.contains("3 blobs, 1 copied, 0 already there"), "\(first.1)")
        let second = try run([])
        #expect(second.0 == 0)
        #expect(second.1.contains("3 blobs, 2 copied, 1 already there"), "\(second.1)")
        #expect(try S3TestEnvironment.boto3Keys(prefix: prefix).count == 3)
    }
}
