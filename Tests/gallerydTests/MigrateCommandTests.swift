import Foundation
import GalleryTestSupport
import Postgres
import Testing

/// `galleryd migrate` and `check-config` need the database or nothing: they must not open the
/// blob store, which would create `./.data/blobs/.tmp` wherever they happen to run.
@Suite(.serialized) struct MigrateCommandTests {
    @Test func migrateAndCheckConfig_CreateNoStorageDirectory_InTheWorkingDirectory() throws {
        let lock = try ClusterLock.acquireFileDescriptor()
        defer { close(lock) }
        let database = try ScratchDatabase(prefix: "galleryd_migrate_cmd")
        defer { database.drop() }
        let directory = NSTemporaryDirectory() + "galleryd-migrate-cwd-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }

        for arguments in [["migrate"], ["migrate", "--status"], ["check-config"]] {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: try galleryBinary())
            process.arguments = arguments
            process.currentDirectoryURL = URL(fileURLWithPath: directory)
            process.environment = ["DATABASE_URL": database.url, "GALLERYD_LOG_LEVEL": "warning"]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            process.waitUntilExit()
            #expect(process.terminationStatus == 0, "galleryd \(arguments.joined(separator: " ")) failed")
            #expect(
                try FileManager.default.contentsOfDirectory(atPath: directory).isEmpty,
                "galleryd \(arguments.joined(separator: " ")) left files in its working directory")
        }
        // And the migrations really ran.
        let connection = try PostgresConnection(url: database.url)
        let applied = try connection.query("select count(*)::bigint as n from schema_migrations").first!.decode(
            Int.self, "n")
        #expect(applied >= 4)
    }
}
