import Foundation
import Testing

@testable import GalleryApp

/// The queue's faults with the formats of issue #28 (bench/faults-jobs.sh puts real 12 MP HEICs and
/// PNGs through them; decision 027, session 21): a HEIC's or PNG's job abandoned by a worker that
/// died in the middle of its decode is finished by the next worker, an I/O error writing its
/// derivatives is a transient fault, and the same bytes uploaded and created again (a client
/// retrying after a crash) give the same file and the same photo and add nothing.
extension JobFaultTests {
    /// The HEIC and the PNG of `UploadFormatTests.allFormats()` (160×120, made by heif-enc and heif-convert).
    static func heicAndPNG() throws -> [(ext: String, bytes: [UInt8])] {
        let files = try UploadFormatTests.allFormats()
        return [("heic", try #require(files["heic"])), ("png", try #require(files["png"]))]
    }

    @Test func heicAndPNG_AbandonedInTheMiddleOfTheirDecode_AreFinishedByTheNextWorker() throws {
        for (ext, bytes) in try Self.heicAndPNG() {
            let server = try TestServer(workers: 0) { UploadTests.smallDerivatives(&$0) }
            defer { server.stop() }
            let id = try server.uploadPhoto(bytes, name: "IMG_0001.\(ext)")
            let queue = server.application.jobs
            // A worker claims the job, marks the photo processing (then decodes) and is killed.
            let dead = try #require(try queue.claim(worker: "dead"))
            try PhotoRepository(pool: server.application.pool).markProcessing(id)
            #expect(try Self.photoStatus(server, id) == "processing", "\(ext)")
            try server.application.pool.query(
                "update jobs set lease_until = now() - interval '1 second' where photo_id = $1", [id])
            let pool = server.application.makeWorkerPool(threads: 1)
            try WorkerTests.drainUntilFinished(server, id, pool: pool)
            let job = try Self.job(server, id)
            #expect(job.state == "done" && job.attempts == 2, "\(ext): \(job)")
            let photo = try server.request("GET", "/parse/classes/Photo/\(id)").json
            #expect(photo["status"] as? String == "ready", "\(ext)")
            #expect((photo["thumbnail"] as? [String: Any])?["url"] is String, "\(ext): \(photo)")
            // The killed worker's late result changes nothing.
            #expect(throws: ProcessingError.self) { try pool.processor.process(dead, queue: queue, worker: "dead") }
            #expect(try Self.job(server, id).attempts == 2, "\(ext)")
        }
    }

    @Test func heicAndPNG_WhoseDerivativeWritesFail_WaitAsTransientFaults_AndEndReady() throws {
        for (ext, bytes) in try Self.heicAndPNG() {
            let server = try TestServer(workers: 0) {
                UploadTests.smallDerivatives(&$0)
                $0.jobMaxAttempts = 1
                $0.jobRetryBaseMs = 1000
            }
            defer { server.stop() }
            let id = try server.uploadPhoto(bytes, name: "IMG_0002.\(ext)")
            // previews/ is a file, not a directory: writing the preview fails with an I/O error,
            // after the slow decode (a full disk's ENOSPC takes the same path).
            let previews = server.storage + "/previews"
            try? FileManager.default.removeItem(atPath: previews)
            #expect(FileManager.default.createFile(atPath: previews, contents: Data("x".utf8)))
            let pool = server.application.makeWorkerPool(threads: 1)
            #expect(pool.drain() == 1)
            let job = try Self.job(server, id)
            #expect(job.state == "queued" && job.transientFailures == 1 && job.attempts == 0, "\(ext): \(job)")
            #expect(try Self.photoStatus(server, id) != "failed", "\(ext)")
            try FileManager.default.removeItem(atPath: previews)
            try WorkerTests.drainUntilFinished(server, id, pool: pool)
            #expect(try Self.job(server, id).state == "done", "\(ext)")
            #expect(try Self.photoStatus(server, id) == "ready", "\(ext)")
        }
    }

    @Test func heicAndPNG_UploadedAndCreatedAgain_GiveTheSameFileAndPhoto_AndAddNothing() throws {
        let server = try TestServer(workers: 0) { UploadTests.smallDerivatives(&$0) }
        defer { server.stop() }
        for (ext, bytes) in try Self.heicAndPNG() {
            var names: [String] = []
            var photos: [(status: Int, id: String?)] = []
            for attempt in 1...2 {
                let file = try server.request(
                    "POST", "/parse/files/retry\(attempt).\(ext)", body: Data(bytes),
                    headers: ["Content-Type": "image/\(ext)"])
                #expect(file.status == 201, "\(ext): \(file.text)")
                let name = try #require(file.json["name"] as? String)
                names.append(name)
                let created = try server.json(
                    "POST", "/parse/classes/Photo", ["original": ["__type": "File", "name": name]])
                photos.append((created.status, created.json["objectId"] as? String))
            }
            #expect(names[0] == names[1] && names[0].hasSuffix(".\(ext)"), "\(ext): \(names)")
            #expect(photos[0].status == 201 && photos[1].status == 200, "\(ext): \(photos)")
            #expect(photos[0].id != nil && photos[0].id == photos[1].id, "\(ext): \(photos)")
            let counts = try #require(
                try server.application.pool.query(
                    """
                    select (select count(*) from files where name = $1)::int as files,
                           (select count(*) from photos where original_key = 'originals/' || $1)::int as photos,
                           (select count(*) from jobs j join photos p on p.object_id = j.photo_id
                             where p.original_key = 'originals/' || $1)::int as jobs
                    """, [names[0]]
                ).first)
            #expect(try counts.decode(Int.self, "files") == 1, "\(ext)")
            #expect(try counts.decode(Int.self, "photos") == 1, "\(ext)")
            #expect(try counts.decode(Int.self, "jobs") == 1, "\(ext)")
            let originals = try FileManager.default.contentsOfDirectory(atPath: server.storage + "/originals")
            #expect(originals.filter { $0 == names[0] }.count == 1, "\(ext): \(originals)")
        }
    }
}
