import BlobStore
import Foundation
import Imaging
import Postgres
import Testing

@testable import GalleryApp

/// Faults the processing queue must survive without failing photos for good: transient errors
/// (full disk, I/O, database down) back off without using up attempts, failed photos can be
/// re-queued (re-upload, `POST /jobs/retry`, `galleryd jobs retry`), a short lease is kept alive
/// by the heartbeat and lost soon after its worker dies, and abandoned temporary files are swept.
@Suite(.serialized) struct JobFaultTests {
    static func job(_ server: TestServer, _ photoId: String) throws -> WorkerTests.JobRow {
        try WorkerTests.job(server, photoId)
    }

    static func photoStatus(_ server: TestServer, _ id: String) throws -> String? {
        try server.request("GET", "/parse/classes/Photo/\(id)").json["status"] as? String
    }

    /// Marks the photo failed as an exhausted job would have.
    static func failForGood(_ server: TestServer, _ id: String) throws {
        try server.application.pool.query(
            "update jobs set state = 'failed', attempts = max_attempts, last_error = 'disk full' where photo_id = $1",
            [id])
        try server.application.pool.query(
            "update photos set status = 'failed', error = 'disk full' where object_id = $1", [id])
    }

    @Test func classify_TellsTransientFaultsFromPermanentOnes() {
        #expect(JobFault.classify(BlobStoreError.insufficientStorage(operation: "write", path: "/x")) == .transient)
        #expect(
            JobFault.classify(BlobStoreError.io(operation: "write", path: "/x", message: "Input/output error"))
                == .transient)
        #expect(JobFault.classify(ImageError.io("read: Input/output error")) == .transient)
        #expect(JobFault.classify(PostgresError.connectFailed(message: "refused")) == .transient)
        #expect(JobFault.classify(PostgresError.connectionClosed(message: "gone")) == .transient)
        #expect(JobFault.classify(PostgresError.poolTimeout(waited: 5)) == .transient)
        #expect(
            JobFault.classify(
                PostgresError.server(sqlState: "53100", message: "disk full", detail: nil, constraint: nil))
                == .transient)
        #expect(
            JobFault.classify(
                PostgresError.server(sqlState: .adminShutdown, message: "bye", detail: nil, constraint: nil))
                == .transient)
        #expect(JobFault.classify(ImageError.truncated) == .permanent)
        #expect(JobFault.classify(ImageError.corrupt("bad Huffman code")) == .permanent)
        #expect(JobFault.classify(ImageError.unsupportedFormat) == .permanent)
        #expect(JobFault.classify(ProcessingError.originalMissing("originals/x.jpg")) == .retryable)
        // The object store: unreachable or failing after its own retries is the surroundings' fault.
        #expect(
            JobFault.classify(
                BlobStoreError.unavailable(operation: "get", key: "originals/x.jpg", message: "connect refused"))
                == .transient)
        #expect(
            JobFault.classify(
                BlobStoreError.remote(operation: "put", key: "k", status: 503, code: "SlowDown", message: ""))
                == .transient)
        #expect(
            JobFault.classify(
                BlobStoreError.remote(operation: "put", key: "k", status: 403, code: "AccessDenied", message: ""))
                == .retryable)
        #expect(
            JobFault.classify(
                PostgresError.server(sqlState: .syntaxError, message: "oops", detail: nil, constraint: nil))
                == .retryable)
    }

    @Test func transientFaults_BackOffWithoutUsingUpAttempts_AndThePhotoIsProcessedOnceTheyPass() throws {
        let server = try TestServer(workers: 0) { $0.jobMaxAttempts = 2 }
        defer { server.stop() }
        let id = try server.uploadPhoto(try TestJPEG.make(width: 48, height: 40, seed: 71))
        let queue = server.application.jobs
        // Far more transient faults in a row than there are attempts: the job stays queued.
        for failure in 1...6 {
            try server.application.pool.query("update jobs set run_at = now() where photo_id = $1", [id])
            let claim = try #require(try queue.claim(worker: "w"))
            try queue.fail(
                claim, worker: "w", reason: "write thumbnails/x.jpg: no space left on device", fault: .transient)
            let job = try Self.job(server, id)
            #expect(job.state == "queued", "after transient fault \(failure)")
            #expect(job.attempts == 0, "a transient fault uses up no attempt")
            #expect(job.transientFailures == failure)
        }
        #expect(try Self.photoStatus(server, id) == "pending")
        // The delay doubles from the base (10 ms in tests) and stops at the cap.
        let delay = try #require(
            try server.application.pool.query(
                "select extract(epoch from run_at - updated_at)::float8 as d from jobs where photo_id = $1", [id]
            ).first
        )
        .decode(Double.self, "d")
        #expect(delay > 0.2 && delay < 1, "6th transient fault waits base × 2^5 = 0.32 s, got \(delay)")
        // The fault passes: the next run makes the photo and clears the transient history.
        try server.application.pool.query("update jobs set run_at = now() where photo_id = $1", [id])
        let pool = server.application.makeWorkerPool(threads: 1)
        #expect(pool.drain() == 1)
        #expect(try Self.photoStatus(server, id) == "ready")
        let job = try Self.job(server, id)
        #expect(job.state == "done" && job.transientFailures == 0)
    }

    @Test func transientFaults_FailThePhoto_OnceTheyHaveLastedLongerThanTheRetryWindow() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let id = try server.uploadPhoto(try TestJPEG.make(width: 48, height: 40, seed: 72))
        let queue = server.application.jobs
        let first = try #require(try queue.claim(worker: "w"))
        try queue.fail(first, worker: "w", reason: "I/O error", fault: .transient)
        #expect(try Self.job(server, id).state == "queued")
        // 25 hours of faults later (the window is 24 hours by default).
        try server.application.pool.query(
            "update jobs set run_at = now(), transient_since = now() - interval '25 hours' where photo_id = $1", [id])
        let late = try #require(try queue.claim(worker: "w"))
        try queue.fail(late, worker: "w", reason: "I/O error", fault: .transient)
        #expect(try Self.job(server, id).state == "failed")
        let photo = try server.request("GET", "/parse/classes/Photo/\(id)").json
        #expect(photo["status"] as? String == "failed")
        #expect((photo["error"] as? String)?.contains("transient faults for more than 24 h") == true)
    }

    @Test func worker_RetriesAfterAnIOErrorWritingDerivatives_InsteadOfFailingThePhoto() throws {
        // One attempt, and a retry a second later (so one drain runs the job once).
        let server = try TestServer(workers: 0) {
            $0.jobMaxAttempts = 1
            $0.jobRetryBaseMs = 1000
        }
        defer { server.stop() }
        let id = try server.uploadPhoto(try TestJPEG.make(width: 48, height: 40, seed: 73))
        // thumbnails/ is a file, not a directory: writing a thumbnail fails with an I/O error.
        let thumbnails = server.storage + "/thumbnails"
        try? FileManager.default.removeItem(atPath: thumbnails)
        #expect(FileManager.default.createFile(atPath: thumbnails, contents: Data("x".utf8)))
        let pool = server.application.makeWorkerPool(threads: 1)
        #expect(pool.drain() == 1)
        var job = try Self.job(server, id)
        #expect(job.state == "queued", "one attempt allowed, yet the I/O error did not fail the photo")
        #expect(job.transientFailures == 1)
        #expect(try Self.photoStatus(server, id) != "failed")
        try FileManager.default.removeItem(atPath: thumbnails)
        try WorkerTests.drainUntilFinished(server, id, pool: pool)
        job = try Self.job(server, id)
        #expect(job.state == "done")
        #expect(try Self.photoStatus(server, id) == "ready")
    }

    @Test func reupload_OfAFailedPhotosBytes_RequeuesIt() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let jpeg = try TestJPEG.make(width: 48, height: 40, seed: 74)
        let id = try server.uploadPhoto(jpeg)
        try Self.failForGood(server, id)
        #expect(try Self.photoStatus(server, id) == "failed")
        #expect(try server.uploadPhoto(jpeg, name: "again.jpg") == id)
        let job = try Self.job(server, id)
        #expect(job.state == "queued" && job.attempts == 0 && job.lastError == nil)
        #expect(try Self.photoStatus(server, id) == "pending")
        #expect(server.application.makeWorkerPool(threads: 1).drain() == 1)
        #expect(try Self.photoStatus(server, id) == "ready")
        // A ready photo uploaded again is left alone.
        #expect(try server.uploadPhoto(jpeg, name: "third.jpg") == id)
        #expect(try Self.job(server, id).state == "done")
    }

    @Test func retryRoute_RequeuesNamedOrAllFailedPhotos_WithTheMasterKeyOnly() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        var ids: [String] = []
        for seed in 75..<78 {
            ids.append(try server.uploadPhoto(try TestJPEG.make(width: 40, height: 40, seed: UInt64(seed))))
        }
        for id in ids { try Self.failForGood(server, id) }
        let master = ["X-Parse-Master-Key": TestServer.masterKey]

        let denied = try server.json("POST", "/parse/jobs/retry", ["status": "failed"], anonymous: true)
        #expect(denied.status == 403)
        #expect(try Self.job(server, ids[0]).state == "failed")

        let one = try server.json("POST", "/parse/jobs/retry", ["photos": [ids[0], "NoSuchPhot"]], headers: master)
        #expect(one.status == 200)
        #expect(one.json["requeued"] as? Int == 1)
        #expect(one.json["photos"] as? [String] == [ids[0]])
        #expect(try Self.job(server, ids[0]).state == "queued")
        #expect(try Self.job(server, ids[1]).state == "failed")

        let all = try server.json("POST", "/parse/jobs/retry", ["status": "failed"], headers: master)
        #expect(all.json["requeued"] as? Int == 2)
        #expect(Set(all.json["photos"] as? [String] ?? []) == Set(ids[1...]))
        for id in ids { #expect(try Self.photoStatus(server, id) == "pending") }

        for body in [#"{"status":"ready"}"#, #"{"photos":[]}"#, #"{"photos":[7]}"#, #"{"other":1}"#, "[]", "{"] {
            let bad = try server.request("POST", "/parse/jobs/retry", body: Data(body.utf8), headers: master)
            #expect(bad.status == 400, "\(body)")
            #expect(bad.json["code"] is Int, "\(body): \(bad.text)")
        }
        #expect(server.application.makeWorkerPool(threads: 1).drain() == 3)
        for id in ids { #expect(try Self.photoStatus(server, id) == "ready") }
    }

    @Test func gallerydJobsRetry_RequeuesEveryFailedPhoto() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let id = try server.uploadPhoto(try TestJPEG.make(width: 40, height: 40, seed: 78))
        try Self.failForGood(server, id)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try ImportTests.galleryd())
        process.arguments = ["jobs", "retry", "--failed"]
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("GALLERYD_") }
        environment["DATABASE_URL"] = server.application.configuration.databaseURL
        environment["GALLERYD_STORAGE_DIR"] = server.storage
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        process.waitUntilExit()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(process.terminationStatus == 0)
        #expect(text.contains("re-queued 1 photo(s): \(id)"), "\(text)")
        #expect(try Self.job(server, id).state == "queued")
        #expect(try Self.photoStatus(server, id) == "pending")
    }

    @Test func heartbeat_StopsBeating_OnceTheActionSaysTheLeaseIsLost() throws {
        let beats = Locked(0)
        let heartbeat = Heartbeat(interval: 0.05) {
            beats.withValue { $0 += 1 }
            return false  // lost: renewing again cannot succeed
        }
        defer { heartbeat.stop() }
        let deadline = Date().addingTimeInterval(30)
        while beats.current == 0 && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        // Many intervals later there has been no second beat (before, it warned on every one).
        Thread.sleep(forTimeInterval: 0.5)
        #expect(beats.current == 1)
    }

    @Test func heartbeat_KeepsAShortLeaseAlive_AndAnAbandonedJobIsTakenSoonAfter() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let id = try server.uploadPhoto(try TestJPEG.make(width: 40, height: 40, seed: 79))
        // The shortest lease configurable (3 s), renewed every second while "running": a beat may
        // come two seconds late (a busy 2-core machine) before the lease lapses.
        let queue = JobQueue(pool: server.application.pool, leaseSeconds: 3, retryBaseMs: 10, maxAttempts: 5)
        let claim = try #require(try queue.claim(worker: "alive"))
        #expect(claim.photoId == id)
        let heartbeat = Heartbeat(interval: 1) { (try? queue.renew(claim, worker: "alive")) ?? true }
        // More than two lease lengths later the job is still held: nobody else may take it.
        Thread.sleep(forTimeInterval: 7)
        #expect(try queue.claim(worker: "other") == nil)
        // The worker dies (no more heartbeats): within about a lease the job is someone else's.
        heartbeat.stop()
        let died = Date()
        var taken: JobQueue.Claim?
        while taken == nil && Date().timeIntervalSince(died) < 30 {
            Thread.sleep(forTimeInterval: 0.1)
            taken = try queue.claim(worker: "other")
        }
        let handover = try #require(taken, "the abandoned job was not picked up")
        #expect(handover.photoId == id && handover.attempt == 2)
        #expect(try queue.renew(claim, worker: "alive") == false, "the dead worker's lease is gone")
    }

    @Test func start_RemovesAtOnceWhatAKilledProcessLeft_EvenFreshFiles() throws {
        let storage = NSTemporaryDirectory() + "galleryd-test-sweep-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: storage) }
        // A process writing an upload dies (its store's lock goes with it, as with kill -9).
        var killed: LocalBlobStore? = try LocalBlobStore(root: storage)
        let left = try #require(try killed?.writeTemporaryFile(Array(repeating: 1, count: 100)))
        killed = nil
        #expect(FileManager.default.fileExists(atPath: left))
        // The next start removes it without waiting for tmp_sweep_minutes.
        let server = try TestServer(workers: 0) { $0.storageDir = storage }
        defer { server.stop() }
        #expect(!FileManager.default.fileExists(atPath: left))
        #expect(!FileManager.default.fileExists(atPath: (left as NSString).deletingLastPathComponent))
    }

    @Test func worker_SweepsAbandonedTemporaryFiles_AndKeepsFreshOnes() throws {
        let server = try TestServer(workers: 0) { $0.tmpSweepMinutes = 1 }
        defer { server.stop() }
        let tmp = server.application.store.spoolDirectory
        let stale = tmp + "/galleryd-body-stale"
        let fresh = tmp + "/galleryd-body-fresh"
        #expect(FileManager.default.createFile(atPath: stale, contents: Data(count: 100)))
        #expect(FileManager.default.createFile(atPath: fresh, contents: Data(count: 100)))
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-120)], ofItemAtPath: stale)
        let pool = server.application.makeWorkerPool(threads: 1)
        #expect(pool.sweepTemporaryFiles() == 1)
        #expect(!FileManager.default.fileExists(atPath: stale))
        #expect(FileManager.default.fileExists(atPath: fresh))
    }
}
