import BlobStore
import Crypto
import Foundation
import Synchronization
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
            let id = try server.uploadPhoto(
                try TestJPEG.make(width: 96, height: 64, seed: UInt64(seed)), name: "m\(seed).jpg")
            #expect(try server.waitForProcessing(id) == "ready")
        }
        let prefix = "migrate-\(UUID().uuidString.prefix(8))/"
        var s3Configuration = server.application.configuration
        S3TestEnvironment.configure(&s3Configuration, prefix: prefix)
        let s3 = try #require(
            try GalleryApplication.makeBlobStore(configuration: s3Configuration, local: server.application.store)
                as? S3BlobStore)
        let local = server.application.store
        let toS3 = StorageMigration(
            pool: server.application.pool, source: local, destination: s3, spoolDirectory: local.spoolDirectory)

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
        let toLocal = StorageMigration(
            pool: server.application.pool, source: s3, destination: back, spoolDirectory: back.spoolDirectory)
        let returned = try toLocal.run()
        #expect(returned.copied == 6)
        #expect(returned.failed.isEmpty)
        for key in keys {
            #expect(
                try Data(contentsOf: URL(fileURLWithPath: back.path(for: key)))
                    == Data(contentsOf: URL(fileURLWithPath: local.path(for: key))))
        }
        #expect(try toLocal.run().skipped == 6)
        try s3.delete(keys)
    }

    @Test func migrateCommand_CopiesInBatches_AndResumes() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        for seed in [91, 92, 93] {
            _ = try server.uploadPhoto(
                try TestJPEG.make(width: 48, height: 32, seed: UInt64(seed)), name: "c\(seed).jpg")
        }
        let prefix = "cli-\(UUID().uuidString.prefix(8))/"
        func run(_ extra: [String]) throws -> (Int32, String) {
            let process = try Self.migrateProcess(server: server, prefix: prefix, extra: extra)
            let out = Pipe()
            process.standardOutput = out
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

    /// `galleryd storage migrate --to s3` against the server's database and store and the test
    /// bucket under `prefix`, not yet started; stderr (the progress bar) goes nowhere.
    static func migrateProcess(server: TestServer, prefix: String, extra: [String]) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try ImportTests.galleryd())
        process.arguments = ["storage", "migrate", "--to", "s3"] + extra
        var environment = ProcessInfo.processInfo.environment.filter {
            !$0.key.hasPrefix("GALLERYD_") || $0.key.hasPrefix("GALLERYD_TEST_")
        }
        environment["DATABASE_URL"] = server.application.configuration.databaseURL
        environment["GALLERYD_STORAGE_DIR"] = server.storage
        environment["GALLERYD_S3_ENDPOINT"] = S3TestEnvironment.value("GALLERYD_TEST_S3_ENDPOINT")
        environment["GALLERYD_S3_BUCKET"] = S3TestEnvironment.value("GALLERYD_TEST_S3_BUCKET") ?? "galleryd-test"
        environment["GALLERYD_S3_ACCESS_KEY_ID"] = S3TestEnvironment.value("GALLERYD_TEST_S3_ACCESS_KEY")
        environment["GALLERYD_S3_SECRET_ACCESS_KEY"] = S3TestEnvironment.value("GALLERYD_TEST_S3_SECRET_KEY")
        environment["GALLERYD_S3_PREFIX"] = prefix
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        return process
    }

    /// GETs from a serving instance in a loop on its own thread (an original from the bucket and a
    /// manifest page, by turns), counting answers that are not 200.
    final class ServingProbe: Sendable {
        private let port: Int
        private let paths: [(String, String)]
        private struct Tally {
            var running = true
            var answered = 0
            var failures: [String] = []
        }
        private let tally = Mutex(Tally())
        var answered: Int { tally.withLock { $0.answered } }
        var failures: [String] { tally.withLock { $0.failures } }
        private let finished = DispatchSemaphore(value: 0)

        init(port: Int, paths: [(path: String, headers: String)]) {
            self.port = port
            self.paths = paths
            Thread.detachNewThread { [self] in
                var index = 0
                while tally.withLock({ $0.running }) {
                    let (path, headers) = self.paths[index % self.paths.count]
                    index += 1
                    let outcome: String?
                    do {
                        let answer = try RawHTTPClient.exchange(
                            port: port, head: "GET \(path) HTTP/1.1\r\nHost: x\r\n\(headers)Connection: close\r\n\r\n")
                        outcome = answer.status == 200 ? nil : "\(path): \(answer.status)"
                    } catch {
                        outcome = "\(path): \(error)"
                    }
                    tally.withLock { tally in
                        tally.answered += 1
                        if let outcome { tally.failures.append(outcome) }
                    }
                    Thread.sleep(forTimeInterval: 0.01)
                }
                finished.signal()
            }
        }

        /// Stops the loop and waits for its last request.
        func stop() -> (answered: Int, failures: [String]) {
            tally.withLock { $0.running = false }
            finished.wait()
            return tally.withLock { ($0.answered, $0.failures) }
        }
    }

    @Test func migrateCommand_KilledWithSIGKILLAtRandomPoints_ResumesToCompletion_WhileServing() throws {
        let server = try TestServer(workers: 0, listening: true)
        defer { server.stop() }
        var expected: [String: String] = [:]
        for seed in 0..<40 {
            let jpeg = try TestJPEG.make(width: 640, height: 480, seed: UInt64(400 + seed), quality: 95)
            _ = try server.uploadPhoto(jpeg, name: "k\(seed).jpg")
            let sha = SHA256.hash(data: jpeg).map { String(format: "%02x", $0) }.joined()
            expected["originals/\(sha).jpg"] = sha
        }
        let prefix = "kill-\(UUID().uuidString.prefix(8))/"
        var s3Configuration = server.application.configuration
        S3TestEnvironment.configure(&s3Configuration, prefix: prefix)
        let s3 = try #require(
            try GalleryApplication.makeBlobStore(configuration: s3Configuration, local: server.application.store)
                as? S3BlobStore)
        func landed() throws -> Int { try s3.list(prefix: "originals/").count }

        // The serving instance (local storage) keeps answering bucket GETs and manifest pages throughout.
        let someOriginal = try #require(expected.keys.sorted().first)
        let probe = ServingProbe(
            port: server.application.port,
            paths: [
                (path: "/bucket/\(someOriginal)", headers: ""),
                (
                    path: "/parse/classes/Photo?limit=5",
                    headers: "X-Parse-Application-Id: gallery\r\nX-Parse-Master-Key: \(TestServer.masterKey)\r\n"
                ),
            ])

        // Each run is killed with SIGKILL a random 0–60 ms after it copied its first blob (a copy
        // takes some milliseconds here, so the kills land between and inside copies).
        var killedMidway = 0
        var counts: [Int] = []
        for _ in 0..<5 {
            let before = try landed()
            guard before < expected.count else { break }
            let process = try Self.migrateProcess(server: server, prefix: prefix, extra: [])
            try process.run()
            let deadline = Date().addingTimeInterval(60)
            while process.isRunning, Date() < deadline, try landed() <= before { Thread.sleep(forTimeInterval: 0.01) }
            Thread.sleep(forTimeInterval: Double.random(in: 0...0.06))
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
            let after = try landed()
            counts.append(after)
            if process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGKILL
                && after < expected.count
            {
                killedMidway += 1
            }
        }
        #expect(
            killedMidway >= 3,
            "kills that landed mid-migration: \(killedMidway), blobs in the bucket after each run: \(counts)")
        #expect(counts == counts.sorted(), "a resumed run lost blobs: \(counts)")

        // A last run, not killed, completes and reports nothing failed.
        let last = try Self.migrateProcess(server: server, prefix: prefix, extra: [])
        let out = Pipe()
        last.standardOutput = out
        try last.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        last.waitUntilExit()
        #expect(last.terminationStatus == 0, "\(text)")
        #expect(
            text.contains("\(expected.count) blobs,") && text.contains(" 0 missing at the source, 0 failed"), "\(text)")

        let serving = probe.stop()
        #expect(serving.failures.isEmpty, "\(serving.failures.prefix(5))")
        #expect(serving.answered > 10)

        // Every blob landed whole: boto3 downloads each and its SHA-256 is the one in its name.
        let hashes = try S3TestEnvironment.boto3SHA256(prefix: prefix)
        #expect(hashes == Dictionary(uniqueKeysWithValues: expected.map { (prefix + $0.key, $0.value) }))
        try s3.delete(expected.keys.map { try BlobKey($0) })
    }
}
