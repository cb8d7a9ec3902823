import Foundation
import Postgres
import Synchronization
import Testing

@testable import GalleryApp

/// The processing queue against a real database: leases that outlive a dead worker, retries with
/// backoff that end in `failed`, NOTIFY wake-ups, idempotent re-runs, and many uploads each
/// processed exactly once.
@Suite(.serialized) struct WorkerTests {
    /// The job row of a photo.
    struct JobRow {
        var state: String
        var attempts: Int
        var transientFailures: Int
        var lockedBy: String?
        var lastError: String?
    }

    /// The job row of a photo (for JobFaultTests and UploadStorageTests too).
    static func job(_ server: TestServer, _ photoId: String) throws -> JobRow {
        let row = try #require(
            try server.application.pool.query(
                "select state, attempts, transient_failures, locked_by, last_error from jobs where photo_id = $1",
                [photoId]
            ).first)
        return JobRow(
            state: try row.decode(String.self, "state"), attempts: try row.decode(Int.self, "attempts"),
            transientFailures: try row.decode(Int.self, "transient_failures"),
            lockedBy: try row.decode(String?.self, "locked_by"), lastError: try row.decode(String?.self, "last_error"))
    }

    /// Runs `pool.drain()` until the job leaves the queue (retries are scheduled in the future, so
    /// one drain may return early), or fails after `timeout`.
    static func drainUntilFinished(
        _ server: TestServer, _ photoId: String, pool: WorkerPool, timeout: TimeInterval = 60
    ) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            pool.drain()
            let state = try job(server, photoId).state
            if state == "done" || state == "failed" { return }
            Thread.sleep(forTimeInterval: 0.02)
        }
        throw TestSetupError(description: "job for \(photoId) did not finish within \(timeout) s")
    }

    @Test func worker_FinishesTheJob_WhenTheWorkerHoldingItDiedAndTheLeaseExpired() throws {
        let server = try TestServer(workers: 0) { UploadTests.smallDerivatives(&$0) }
        defer { server.stop() }
        let id = try server.uploadPhoto(try TestJPEG.make(width: 80, height: 60, seed: 21))
        let queue = server.application.jobs

        // A worker claims the job and dies without a word.
        let dead = try #require(try queue.claim(worker: "dead"))
        #expect(dead.photoId == id)
        #expect(dead.attempt == 1)
        #expect(try Self.job(server, id).state == "running")
        // While its lease holds, nobody else gets the job.
        #expect(try queue.claim(worker: "other") == nil)

        // The lease runs out.
        try server.application.pool.query(
            "update jobs set lease_until = now() - interval '1 second' where photo_id = $1", [id])
        let pool = server.application.makeWorkerPool(threads: 1)
        pool.start()
        defer { pool.stop() }
        #expect(try server.waitForProcessing(id) == "ready")
        let job = try Self.job(server, id)
        #expect(job.state == "done")
        #expect(job.attempts == 2)
        #expect(job.lockedBy != "dead")

        // The dead worker comes back and tries to finish: its result is refused, nothing changes.
        let processor = pool.processor
        #expect(throws: ProcessingError.self) { try processor.process(dead, queue: queue, worker: "dead") }
        try queue.fail(dead, worker: "dead", reason: "late")
        let after = try Self.job(server, id)
        #expect(after.state == "done" && after.attempts == 2 && after.lastError == nil)
        #expect(try server.request("GET", "/parse/classes/Photo/\(id)").json["status"] as? String == "ready")
    }

    @Test func worker_FailsTheJob_WhenEveryAttemptEndedWithTheWorkerDying() throws {
        let server = try TestServer(workers: 0) { $0.jobMaxAttempts = 2 }
        defer { server.stop() }
        let id = try server.uploadPhoto(try TestJPEG.make(width: 48, height: 48, seed: 22))
        let queue = server.application.jobs
        for attempt in 1...2 {
            let claim = try #require(try queue.claim(worker: "doomed-\(attempt)"))
            #expect(claim.attempt == attempt)
            try server.application.pool.query(
                "update jobs set lease_until = now() - interval '1 second' where photo_id = $1", [id])
        }
        // No attempts left: not claimed a third time, but failed with the reason.
        #expect(try queue.claim(worker: "third") == nil)
        let job = try Self.job(server, id)
        #expect(job.state == "failed")
        #expect(job.attempts == 2)
        let photo = try server.request("GET", "/parse/classes/Photo/\(id)").json
        #expect(photo["status"] as? String == "failed")
        #expect((photo["error"] as? String)?.contains("lease expired") == true)
    }

    @Test func worker_RetriesWithBackoff_ThenMarksThePhotoFailed_WhenTheOriginalIsMissing() throws {
        // A 2 s base delay: long enough that the retry is never due while the first drain runs,
        // however busy the machine (with 10 ms it sometimes was, and ran twice).
        let server = try TestServer(workers: 0) {
            $0.jobMaxAttempts = 3
            $0.jobRetryBaseMs = 2000
        }
        defer { server.stop() }
        let jpeg = try TestJPEG.make(width: 48, height: 32, seed: 23)
        let id = try server.uploadPhoto(jpeg)
        let originals = server.blobFiles(under: "originals")
        #expect(originals.count == 1)
        for name in originals { try FileManager.default.removeItem(atPath: server.storage + "/originals/" + name) }

        let pool = server.application.makeWorkerPool(threads: 1)
        // The first attempt fails and schedules a retry after the base delay, not at once.
        #expect(pool.drain() == 1)
        var job = try Self.job(server, id)
        #expect(job.state == "queued")
        #expect(job.attempts == 1)
        #expect(job.lastError?.contains("missing") == true)
        let delay = try #require(
            try server.application.pool.query(
                "select extract(epoch from run_at - updated_at)::float8 as d from jobs where photo_id = $1", [id]
            ).first
        )
        .decode(Double.self, "d")
        #expect(delay > 0)
        #expect(server.application.jobs.retryDelay(afterAttempt: 1) == 2)
        #expect(server.application.jobs.retryDelay(afterAttempt: 3) == 8)

        // The later attempts, each made due at once instead of waiting out its back-off.
        let deadline = Date().addingTimeInterval(60)
        while try Self.job(server, id).state == "queued", Date() < deadline {
            _ = try server.application.pool.query("update jobs set run_at = now() where photo_id = $1", [id])
            pool.drain()
        }
        job = try Self.job(server, id)
        #expect(job.state == "failed")
        #expect(job.attempts == 3)
        let photo = try server.request("GET", "/parse/classes/Photo/\(id)").json
        #expect(photo["status"] as? String == "failed")
        #expect((photo["error"] as? String)?.contains("missing") == true)
        #expect(photo["thumbnail"] == nil)
    }

    @Test func worker_FailsAtOnce_WhenTheImageDataIsTruncated() throws {
        let server = try TestServer(workers: 0) { $0.jobMaxAttempts = 5 }
        defer { server.stop() }
        // The upload refuses a file without its end marker, so the stored original is cut short
        // afterwards (a damaged disk): the header is intact but the scan data stops half-way.
        let jpeg = try TestJPEG.make(width: 96, height: 96, seed: 24)
        let id = try server.uploadPhoto(jpeg)
        for name in server.blobFiles(under: "originals") {
            try Data(jpeg.prefix(jpeg.count * 2 / 3)).write(
                to: URL(fileURLWithPath: server.storage + "/originals/" + name))
        }
        let pool = server.application.makeWorkerPool(threads: 1)
        try Self.drainUntilFinished(server, id, pool: pool)
        let job = try Self.job(server, id)
        #expect(job.state == "failed")
        #expect(job.attempts == 1, "a corrupt image is not retried")
        let photo = try server.request("GET", "/parse/classes/Photo/\(id)").json
        #expect(photo["status"] as? String == "failed")
        #expect((photo["error"] as? String)?.contains("truncated") == true)
        #expect(server.blobFiles(under: "thumbnails").isEmpty)
    }

    @Test func worker_WakesOnNotify_WithoutWaitingForThePoll() throws {
        let server = try TestServer(workers: 0) { UploadTests.smallDerivatives(&$0) }
        defer { server.stop() }
        let application = server.application
        // A pool that would poll only once an hour: only the NOTIFY can get the job done in time.
        var settings = WorkerPool.Settings(threads: 1, trashRetentionDays: 30)
        settings.pollInterval = 3600
        let template = application.makeWorkerPool(threads: 1)
        let pool = WorkerPool(
            settings: settings, queue: application.jobs, processor: template.processor, trash: application.trash,
            databaseURL: application.configuration.databaseURL, logger: application.logger, metrics: nil)
        pool.start()
        defer { pool.stop() }
        // Let the worker find the queue empty and go to sleep, and the listener connect.
        Thread.sleep(forTimeInterval: 1)
        let id = try server.uploadPhoto(try TestJPEG.make(width: 64, height: 64, seed: 25))
        #expect(try server.waitForProcessing(id, timeout: 60) == "ready")
    }

    @Test func worker_RerunningAFinishedJob_LeavesTheSameResult() throws {
        let server = try TestServer(workers: 0) { UploadTests.smallDerivatives(&$0) }
        defer { server.stop() }
        let id = try server.uploadPhoto(try TestJPEG.make(width: 100, height: 50, seed: 26))
        let pool = server.application.makeWorkerPool(threads: 1)
        #expect(pool.drain() == 1)
        let columns = [
            "status", "thumbnail_key", "preview_key", "thumbnail_width", "thumbnail_height", "preview_width",
            "preview_height", "dominant_color", "width", "height", "error",
        ]
        func snapshot() throws -> [String?] {
            let list = columns.map { "\($0)::text" }.joined(separator: ", ")
            let row = try #require(
                try server.application.pool.query("select \(list) from photos where object_id = $1", [id]).first)
            return try columns.indices.map { try row.decode(String?.self, $0) }
        }
        let first = try snapshot()
        #expect(first[0] == "ready")
        try server.application.pool.query("update jobs set state = 'queued', run_at = now() where photo_id = $1", [id])
        #expect(pool.drain() == 1)
        #expect(try snapshot() == first)
        #expect(try Self.job(server, id).state == "done")
        #expect(server.blobFiles(under: "thumbnails") == ["\(id).jpg"])
        #expect(server.blobFiles(under: "previews") == ["\(id).jpg"])
        #expect(
            try server.fetchFile(try server.request("GET", "/parse/classes/Photo/\(id)").json["thumbnail"]).status
                == 200)
    }

    /// Starts the built galleryd with `arguments` against the server's database and store, its
    /// stderr going to a temporary file (returned) so the test can wait for a log line.
    static func startGalleryd(_ arguments: [String], server: TestServer) throws -> (process: Process, log: String) {
        let log = NSTemporaryDirectory() + "galleryd-test-\(UUID().uuidString).log"
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try ImportTests.galleryd())
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("GALLERYD_") }
        environment["DATABASE_URL"] = server.application.configuration.databaseURL
        environment["GALLERYD_STORAGE_DIR"] = server.storage
        environment["GALLERYD_MASTER_KEY"] = TestServer.masterKey
        environment["GALLERYD_URL_SIGNING_KEY"] = TestServer.urlSigningKey
        environment["GALLERYD_LOG_LEVEL"] = "notice"
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        try process.run()
        return (process, log)
    }

    /// Sends SIGTERM and expects a clean exit (status 0) within 30 s.
    static func expectCleanExitOnSIGTERM(
        _ process: Process, log: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        kill(process.processIdentifier, SIGTERM)
        let deadline = Date().addingTimeInterval(30)
        while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        #expect(!process.isRunning, "galleryd ignored SIGTERM:\n\(text)", sourceLocation: sourceLocation)
        if !process.isRunning {
            #expect(
                process.terminationReason == .exit && process.terminationStatus == 0, "\(text)",
                sourceLocation: sourceLocation)
        }
    }

    @Test func gallerydWorker_ProcessesJobsFromAnotherProcess_AndExitsCleanlyOnSIGTERM() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let (process, log) = try Self.startGalleryd(["worker", "--threads", "1"], server: server)
        defer {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            try? FileManager.default.removeItem(atPath: log)
        }
        let id = try server.uploadPhoto(try TestJPEG.make(width: 64, height: 40, seed: 27))
        #expect(try server.waitForProcessing(id) == "ready")
        #expect(try Self.job(server, id).lockedBy?.hasSuffix("/0") == true)
        Self.expectCleanExitOnSIGTERM(process, log: log)
    }

    @Test func gallerydServe_ExitsCleanlyOnSIGTERM_OnceItsThreadsAreRunning() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let (process, log) = try Self.startGalleryd(
            ["serve", "--host", "127.0.0.1", "--port", "0", "--workers", "1", "--no-migrate"], server: server)
        defer {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            try? FileManager.default.removeItem(atPath: log)
        }
        let deadline = Date().addingTimeInterval(30)
        while process.isRunning && Date() < deadline,
            !((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").contains("galleryd listening")
        {
            Thread.sleep(forTimeInterval: 0.05)
        }
        #expect(process.isRunning)
        Self.expectCleanExitOnSIGTERM(process, log: log)
    }

    @Test func workers_ProcessTwentyConcurrentUploads_EachExactlyOnce() throws {
        let server = try TestServer(workers: 3) { UploadTests.smallDerivatives(&$0) }
        defer { server.stop() }
        let images = try (0..<20).map { try TestJPEG.make(width: 48 + $0, height: 40, seed: 100 + UInt64($0)) }
        let ids = UploadResults(count: images.count)
        DispatchQueue.concurrentPerform(iterations: images.count) { index in
            ids.set(index, Result { try server.uploadPhoto(images[index], name: "c\(index).jpg") })
        }
        let uploaded = try ids.all.map { try $0!.get() }
        #expect(Set(uploaded).count == 20)
        for id in uploaded { #expect(try server.waitForProcessing(id) == "ready") }
        #expect(try server.scalar("select count(*)::bigint from photos where status = 'ready'") == 20)
        #expect(try server.scalar("select count(*)::bigint from jobs where state = 'done' and attempts = 1") == 20)
        #expect(try server.scalar("select count(*)::bigint from jobs") == 20)
        #expect(server.blobFiles(under: "thumbnails").count == 20)
        #expect(server.blobFiles(under: "originals").count == 20)
    }
}

/// Results written from concurrent upload threads.
final class UploadResults: Sendable {
    private let results: Mutex<[Result<String, Error>?]>

    init(count: Int) { results = Mutex(Array(repeating: nil, count: count)) }

    func set(_ index: Int, _ result: Result<String, Error>) {
        results.withLock { $0[index] = result }
    }

    var all: [Result<String, Error>?] {
        results.withLock { $0 }
    }
}
