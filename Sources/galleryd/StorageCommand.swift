import ArgumentParser
import BlobStore
import Foundation
import GalleryApp

/// `galleryd storage migrate --to s3|local`: copies every blob between the local directory and the
/// S3 bucket of the configuration, verifying each; resumable and safe while serving. Switch
/// `storage` afterwards and restart.
struct StorageCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "storage", abstract: "Manage the blob store.", subcommands: [Migrate.self])

    struct Migrate: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Copy every blob to the other store (s3 or local), verified; run again to resume.")

        @OptionGroup var options: ConfigOptions
        @Option(help: "The destination: s3 or local.") var to: String
        @Option(help: "Stop after copying this many blobs (migrate in batches; run again to continue).") var limit: Int?

        func run() throws {
            var configuration = options.load()
            guard !configuration.databaseURL.isEmpty else { fail("config: database_url: not set (DATABASE_URL)") }
            guard to == "s3" || to == "local" else { fail("storage migrate: --to must be s3 or local") }
            configuration.workers = 0
            configuration.storage = "local"
            let logger = bootstrapLogging(level: "warning")
            let application: GalleryApplication
            let remote: any BlobStore
            do {
                application = try GalleryApplication(configuration: configuration, logger: logger)
                var s3 = configuration
                s3.storage = "s3"
                remote = try GalleryApplication.makeBlobStore(configuration: s3, local: application.store)
            } catch {
                fail("storage migrate: \(error)", code: 1)
            }
            let local = application.store
            let migration = StorageMigration(
                pool: application.pool, source: to == "s3" ? local : remote, destination: to == "s3" ? remote : local,
                spoolDirectory: local.spoolDirectory)
            let terminal = isatty(STDERR_FILENO) != 0
            let report: StorageMigration.Report
            do {
                report = try migration.run(limit: limit ?? .max) { done, total in
                    if terminal || done == total || done % 100 == 0 {
                        let width = 30
                        let filled = total == 0 ? width : done * width / total
                        let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
                        FileHandle.standardError.write(Data("\r[\(bar)] \(done)/\(total)\(terminal ? "" : "\n")".utf8))
                    }
                }
            } catch {
                fail("storage migrate: \(error)", code: 1)
            }
            if terminal { FileHandle.standardError.write(Data("\n".utf8)) }
            print(
                "storage migrate --to \(to): \(report.total) blobs, \(report.copied) copied, \(report.skipped) already there, "
                    + "\(report.missing) missing at the source, \(report.failed.count) failed")
            for (key, reason) in report.failed.sorted(by: { $0.key < $1.key }) {
                FileHandle.standardError.write(Data("galleryd: storage migrate: \(key): \(reason)\n".utf8))
            }
            if !report.failed.isEmpty { throw ExitCode(1) }
        }
    }
}
