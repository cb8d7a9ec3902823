import BlobStore
import Foundation
import Imaging
import Testing

@testable import GalleryApp

/// Uploads are checked before they cost anything, and a full disk is a clear, temporary error:
/// keys are checked on the head (403 before a byte of the body is read), free space and the spool
/// budget likewise (507, Parse code 1), a body cut off in transit is refused (130), and with the
/// store's disk really full reads keep working and uploads resume once space is freed.
@Suite(.serialized) struct UploadStorageTests {
    /// The head of an upload announcing `length` bytes, with `extra` header lines.
    static func uploadHead(
        length: Int,
        extra: String = "X-Parse-Application-Id: gallery\r\nX-Parse-Master-Key: \(TestServer.masterKey)\r\n"
    ) -> String {
        "POST /parse/files/a.jpg HTTP/1.1\r\nHost: t\r\n\(extra)Content-Type: image/jpeg\r\nContent-Length: \(length)\r\n\r\n"
    }

    static func json(_ response: RawHTTP.Response) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any] ?? [:]
    }

    /// Names in the store's temporary directory (spooled bodies, staged blobs).
    static func temporaryFiles(_ server: TestServer) -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: server.application.store.spoolDirectory)) ?? []
    }

    @Test func upload_Gets403FromItsHeadAlone_BeforeAnyOfTheBodyIsSent() throws {
        // A long body timeout: only an answer given on the head can arrive in time.
        let server = try TestServer(workers: 0, listening: true) {
            $0.bodyTimeoutMs = 60_000
            $0.restKey = "rest-key-for-tests"
        }
        defer { server.stop() }
        let port = server.application.port
        for extra in [
            "", "X-Parse-Application-Id: other\r\n", "X-Parse-Application-Id: gallery\r\n",
            "X-Parse-Application-Id: gallery\r\nX-Parse-REST-API-Key: wrong\r\n",
        ] {
            let started = Date()
            let r = try RawHTTP.exchange(port: port, head: Self.uploadHead(length: 5_000_000, extra: extra))
            #expect(r.status == 403, "\(extra)")
            #expect(Self.json(r)["error"] as? String == "unauthorized")
            #expect(Date().timeIntervalSince(started) < 30, "answered without waiting for the body")
        }
        #expect(Self.temporaryFiles(server).isEmpty, "nothing was spooled")
        // With the right keys the same upload goes through.
        let jpeg = try TestJPEG.make(width: 40, height: 40, seed: 81)
        let ok = try RawHTTP.exchange(
            port: port,
            head: Self.uploadHead(
                length: jpeg.count,
                extra:
                    "X-Parse-Application-Id: gallery\r\nX-Parse-REST-API-Key: rest-key-for-tests\r\nX-Parse-Master-Key: \(TestServer.masterKey)\r\nConnection: close\r\n"
            ),
            body: jpeg)
        #expect(ok.status == 201)
    }

    @Test func upload_Gets507WithParseCode1_WhenFreeSpaceIsBelowMinFreeBytes_AndReadsKeepWorking() throws {
        // A reserve no disk here has: every upload is refused as if the disk were full.
        let server = try TestServer(workers: 0, listening: true) {
            $0.minFreeBytes = 1 << 50
            $0.bodyTimeoutMs = 60_000
        }
        defer { server.stop() }
        let ids = try server.insertPhotos(3)
        let head = try RawHTTP.exchange(port: server.application.port, head: Self.uploadHead(length: 5_000_000))
        #expect(head.status == 507)
        #expect(Self.json(head)["code"] as? Int == 1)
        #expect((Self.json(head)["error"] as? String)?.lowercased().contains("insufficient storage") == true)
        #expect(head.header("Retry-After") != nil)
        let whole = try server.request(
            "POST", "/parse/files/b.jpg", body: Data(try TestJPEG.make(width: 40, height: 40, seed: 82)),
            headers: ["Content-Type": "image/jpeg"])
        #expect(whole.status == 507)
        #expect(whole.json["code"] as? Int == 1)
        #expect(Self.temporaryFiles(server).isEmpty)
        #expect(try server.scalar("select count(*)::bigint from files") == 0)
        // Reads are untouched.
        let page = try server.request("GET", "/parse/classes/Photo?limit=10")
        #expect(page.status == 200)
        #expect((page.json["results"] as? [Any])?.count == ids.count)
        #expect(try server.request("GET", "/health").status == 200)
    }

    @Test func upload_IsRefusedWith130_WhenTheJPEGEndsBeforeItsEndMarker_ButTrailingBytesAfterItAreFine() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let jpeg = try TestJPEG.make(width: 96, height: 64, seed: 83)
        #expect(JPEGEndOfImage.isComplete(bytes: jpeg))
        for cut in [jpeg.count - 2, jpeg.count - 1, jpeg.count * 2 / 3, jpeg.count / 3] {
            let truncated = Array(jpeg.prefix(cut))
            #expect(!JPEGEndOfImage.isComplete(bytes: truncated), "cut at \(cut)")
            let r = try server.request(
                "POST", "/parse/files/cut.jpg", body: Data(truncated), headers: ["Content-Type": "image/jpeg"])
            #expect(r.status == 400, "cut at \(cut)")
            #expect(r.json["code"] as? Int == 130, "cut at \(cut): \(r.text)")
            #expect((r.json["error"] as? String)?.contains("truncated") == true)
        }
        #expect(try server.scalar("select count(*)::bigint from files") == 0)
        // A Motion Photo style trailer after EOI (FF bytes included) is not truncation.
        let trailer = [UInt8](repeating: 0xFF, count: 10) + Array("ftypmp42 video bytes".utf8)
        let withTrailer = try server.request(
            "POST", "/parse/files/motion.jpg", body: Data(jpeg + trailer), headers: ["Content-Type": "image/jpeg"])
        #expect(withTrailer.status == 201)
    }

    @Test func spoolBudget_RefusesUploadsBeyondMaxSpoolBytes_UntilEarlierOnesAreDone() throws {
        let store = try LocalBlobStore(root: NSTemporaryDirectory() + "galleryd-spool-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(atPath: store.root) }
        let admission = UploadAdmission(store: store, maxSpoolBytes: 1000, minFreeBytes: 0, maxUploadBytes: 5000)
        do {
            let first = try admission.admit(contentLength: 600)
            #expect(admission.spoolingBytes == 600)
            #expect(throws: InsufficientStorage.self) { _ = try admission.admit(contentLength: 600) }
            let second = try admission.admit(contentLength: 400)
            #expect(admission.spoolingBytes == 1000)
            withExtendedLifetime((first, second)) {}
        }
        // Released with their requests: the budget is free again.
        #expect(admission.spoolingBytes == 0)
        do {
            // Chunked (no length) counts at the upload limit; one upload alone is always admitted.
            let chunked = try admission.admit(contentLength: nil)
            #expect(admission.spoolingBytes == 5000)
            #expect(throws: InsufficientStorage.self) { _ = try admission.admit(contentLength: 1) }
            withExtendedLifetime(chunked) {}
        }
        #expect(admission.spoolingBytes == 0)
    }

    /// Whether this process may mount a tmpfs (root in a namespace that allows it).
    static let canMountTmpfs: Bool = {
        guard getuid() == 0 else { return false }
        let point = NSTemporaryDirectory() + "galleryd-tmpfs-probe-\(UUID().uuidString)"
        guard (try? FileManager.default.createDirectory(atPath: point, withIntermediateDirectories: true)) != nil else {
            return false
        }
        defer { rmdir(point) }
        guard run("/bin/mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", point]) == 0 else { return false }
        return run("/bin/umount", [point]) == 0
    }()

    @discardableResult
    static func run(_ tool: String, _ arguments: [String]) -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return -1 }
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// Writes `path` until the file system has at most `leaving` bytes free (0: until ENOSPC).
    static func fill(_ path: String, store: LocalBlobStore, leaving: Int64) {
        let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        defer { close(fd) }
        let chunk = [UInt8](repeating: 0x5A, count: 64 * 1024)
        while (store.availableBytes() ?? 0) > leaving {
            let want = leaving == 0 ? chunk.count : min(chunk.count, Int((store.availableBytes() ?? 0) - leaving))
            if chunk.withUnsafeBytes({ write(fd, $0.baseAddress, want) }) <= 0 { break }
        }
    }

    /// Runs `body` with a server (no workers) whose store is on a fresh tmpfs of `size` (`"8m"`),
    /// configured further by `configure`; stops the server and unmounts afterwards. `body` gets the
    /// mount point, where a filler file can take the space.
    static func withStoreOnTmpfs(
        size: String, _ configure: (inout GalleryConfiguration) -> Void, _ body: (TestServer, String) throws -> Void
    ) throws {
        let point = NSTemporaryDirectory() + "galleryd-tmpfs-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: point, withIntermediateDirectories: true)
        try #require(run("/bin/mount", ["-t", "tmpfs", "-o", "size=\(size)", "tmpfs", point]) == 0)
        defer {
            // Lazily (`-l`): something of the stopped server still held the mount busy, so a plain
            // umount failed and every run of this suite left its three tmpfs mounted (165 on this
            // machine); detached, a tmpfs goes once its last open file is closed.
            run("/bin/umount", ["-l", point])
            rmdir(point)
        }
        let server = try TestServer(workers: 0, listening: true) {
            $0.storageDir = point + "/blobs"
            configure(&$0)
        }
        defer { server.stop() }
        try body(server, point)
    }

    @Test(.enabled(if: canMountTmpfs, "needs root to mount a tmpfs"))
    func diskFull_OnATmpfsStore_Gives507_KeepsReadsWorking_AndUploadsAndJobsResumeOnceSpaceIsFreed() throws {
        let reserve = 4 << 20
        try Self.withStoreOnTmpfs(
            size: "16m",
            {
                $0.minFreeBytes = reserve
                UploadTests.smallDerivatives(&$0)
            }
        ) { server, point in
            let store = server.application.store
            let pool = server.application.makeWorkerPool(threads: 1)
            let ready = try server.uploadPhoto(try TestJPEG.make(width: 64, height: 48, seed: 84))
            #expect(pool.drain() == 1)
            let waiting = try server.uploadPhoto(try TestJPEG.make(width: 64, height: 48, seed: 85))
            let filler = point + "/filler"

            // Below the reserve: uploads are refused at once, reads go on.
            Self.fill(filler, store: store, leaving: Int64(reserve / 2))
            let jpeg = try TestJPEG.make(width: 64, height: 48, seed: 86)
            let refused = try server.request(
                "POST", "/parse/files/c.jpg", body: Data(jpeg), headers: ["Content-Type": "image/jpeg"])
            #expect(refused.status == 507)
            #expect(refused.json["code"] as? Int == 1)
            let photo = try server.request("GET", "/parse/classes/Photo/\(ready)")
            #expect(photo.status == 200)
            #expect(try server.fetchFile(photo.json["thumbnail"]).status == 200)
            #expect(try server.fetchFile(photo.json["original"]).status == 200)

            // Completely full: the worker cannot write derivatives, and that is a transient fault.
            Self.fill(filler, store: store, leaving: 0)
            pool.drain()
            let job = try JobFaultTests.job(server, waiting)
            #expect(job.state == "queued")
            #expect(job.transientFailures >= 1)
            #expect(job.lastError?.contains("no space") == true, "\(job.lastError ?? "")")
            #expect(try JobFaultTests.photoStatus(server, waiting) != "failed")
            #expect(try server.request("GET", "/parse/classes/Photo?limit=5").status == 200)

            // Space is freed: the upload and the waiting photo go through.
            unlink(filler)
            let accepted = try server.request(
                "POST", "/parse/files/c.jpg", body: Data(jpeg), headers: ["Content-Type": "image/jpeg"])
            #expect(accepted.status == 201)
            #expect(try server.fetchFile(accepted.json["url"].map { ["url": $0] }).status == 200)
            try server.application.pool.query("update jobs set run_at = now() where photo_id = $1", [waiting])
            try WorkerTests.drainUntilFinished(server, waiting, pool: pool)
            #expect(try JobFaultTests.photoStatus(server, waiting) == "ready")
            #expect(
                Self.temporaryFiles(server).isEmpty, "no temporary file left behind: \(Self.temporaryFiles(server))")
        }
    }

    @Test(.enabled(if: canMountTmpfs, "needs root to mount a tmpfs"))
    func diskFilledToTheLastByte_Gives507NotA500_AndNothingIsStored() throws {
        // No reserve: only the body itself must fit, and with nothing free not even its head is admitted.
        try Self.withStoreOnTmpfs(
            size: "8m",
            {
                $0.minFreeBytes = 0
            }
        ) { server, point in
            let kept = try server.uploadPhoto(try TestJPEG.make(width: 64, height: 48, seed: 87))
            let filler = point + "/filler"
            Self.fill(filler, store: server.application.store, leaving: 0)
            let jpeg = try TestJPEG.make(width: 64, height: 48, seed: 88)
            let refused = try server.request(
                "POST", "/parse/files/d.jpg", body: Data(jpeg), headers: ["Content-Type": "image/jpeg"])
            #expect(refused.status == 507)
            #expect(refused.json["code"] as? Int == 1)
            #expect(
                (refused.json["error"] as? String)?.lowercased().contains("insufficient storage") == true,
                "\(refused.text)")
            #expect(refused.header("Retry-After") == "60")
            #expect(try server.scalar("select count(*)::bigint from files") == 1)
            // Where a small body admitted earlier is spooled from memory: insufficientStorage too (507).
            #expect {
                try server.application.store.writeTemporaryFile([UInt8](repeating: 1, count: 8192))
            } throws: { error in
                if case BlobStoreError.insufficientStorage = error { return true }
                return false
            }
            #expect(Self.temporaryFiles(server).isEmpty, "\(Self.temporaryFiles(server))")
            #expect(try server.request("GET", "/parse/classes/Photo/\(kept)").status == 200)
            unlink(filler)
            let accepted = try server.request(
                "POST", "/parse/files/d.jpg", body: Data(jpeg), headers: ["Content-Type": "image/jpeg"])
            #expect(accepted.status == 201)
        }
    }

    @Test(.enabled(if: canMountTmpfs, "needs root to mount a tmpfs"))
    func diskFillingWhileABodyIsSpooled_Gives507WithRetryAfter_AsEveryFullDiskDoes() throws {
        try Self.withStoreOnTmpfs(
            size: "8m",
            {
                $0.minFreeBytes = 0
                $0.bodyTimeoutMs = 60_000
            }
        ) { server, point in
            // Admitted on its head (the space is there then), spooling to a file (larger than the
            // in-memory threshold) ...
            let length = 512 * 1024
            let client = try RawHTTPClient(port: server.application.port)
            #expect(client.send(Self.uploadHead(length: length)))
            let deadline = Date().addingTimeInterval(30)
            while Self.temporaryFiles(server).isEmpty && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
            try #require(!Self.temporaryFiles(server).isEmpty, "the body's temporary file was never made")
            // ... when something else fills the disk: the body's write fails with ENOSPC.
            let filler = point + "/filler"
            Self.fill(filler, store: server.application.store, leaving: 0)
            // A first piece only: all of it is read before the answer, so the close after it is
            // orderly (unread bytes would make it a reset that can swallow the answer).
            #expect(client.send([UInt8](repeating: 0x42, count: 4096)))
            let refused = try client.readResponse()
            #expect(refused.status == 507)
            #expect(Self.json(refused)["code"] as? Int == 1, "\(String(decoding: refused.body, as: UTF8.self))")
            #expect(Self.json(refused)["error"] as? String == ParseErrorResponder.diskFull)
            #expect(refused.header("Retry-After") == "60")
            #expect(Self.temporaryFiles(server).isEmpty, "\(Self.temporaryFiles(server))")
            // Space freed: uploads go through again.
            unlink(filler)
            let jpeg = try TestJPEG.make(width: 64, height: 48, seed: 89)
            let accepted = try server.request(
                "POST", "/parse/files/e.jpg", body: Data(jpeg), headers: ["Content-Type": "image/jpeg"])
            #expect(accepted.status == 201)
        }
    }
}
