import BlobStore
import Crypto
import Foundation
import GalleryTestSupport
import Logging
import Testing

@testable import GalleryApp
@testable import Imaging

/// `storage = "s3"` end to end against moto: two `galleryd serve` instances on one database and one
/// bucket, an upload through one processed by the other's worker and served by both, by proxy
/// (Range, ETag, 304) and by redirect (307 to a presigned URL); purge deletes in the bucket.
@Suite(.enabled(if: S3TestEnvironment.isProvided, S3TestEnvironment.skipReason), .serialized)
struct S3StorageTests {
    /// One instance on the shared database and bucket, with its own local spool directory.
    private static func instance(
        databaseURL: String, prefix: String, workers: Int, delivery: String, endpoint: String? = nil,
        bucketPublic: Bool = true
    ) throws -> (GalleryApplication, String) {
        let spool = NSTemporaryDirectory() + "galleryd-s3-test-" + UUID().uuidString
        var configuration = GalleryConfiguration()
        configuration.host = "127.0.0.1"
        configuration.port = 0
        configuration.databaseURL = databaseURL
        configuration.storageDir = spool
        configuration.masterKey = TestServer.masterKey
        configuration.urlSigningKey = TestServer.urlSigningKey
        configuration.bucketPublic = bucketPublic
        configuration.workers = workers
        configuration.poolSize = 4
        configuration.jobRetryBaseMs = 10
        configuration.drainTimeoutMs = 2000
        configuration.thumbnailSize = 32
        configuration.previewSize = 96
        configuration.assetDelivery = delivery
        if delivery == "redirect" { configuration.publicAssetURL = "https://cdn.example.com/gallery/" }
        S3TestEnvironment.configure(&configuration, prefix: prefix)
        if let endpoint { configuration.s3Endpoint = endpoint }
        var logger = Logger(label: "galleryd.test")
        logger.logLevel = .warning
        let application = try GalleryApplication(configuration: configuration, logger: logger)
        try application.start()
        return (application, spool)
    }

    /// Runs `body` with one instance (no workers) on a fresh database and the bucket under `prefix`,
    /// holding the cluster lock; the instance is stopped and its spool removed afterwards.
    private static func withInstance(
        prefix: String, delivery: String = "proxy", endpoint: String? = nil,
        _ body: (GalleryApplication, String) throws -> Void
    ) throws {
        let lock = try ClusterLock.acquire()
        defer { lock.release() }
        let database = try TestServer.makeDatabase()
        defer { TestServer.dropDatabase(database.name, admin: database.admin) }
        let (application, spool) = try instance(
            databaseURL: database.url, prefix: prefix, workers: 0, delivery: delivery, endpoint: endpoint)
        defer {
            application.shutdown()
            application.wait()
            try? FileManager.default.removeItem(atPath: spool)
        }
        try body(application, spool)
    }

    private static func get(_ port: Int, _ path: String, headers: String = "") throws -> RawHTTPResponse {
        try RawHTTPClient.exchange(
            port: port, head: "GET \(path) HTTP/1.1\r\nHost: x\r\n\(headers)Connection: close\r\n\r\n")
    }

    @Test func twoInstances_OnOneDatabaseAndBucket_UploadThroughOne_ProcessedAndServedByBoth() throws {
        let lock = try ClusterLock.acquire()
        defer { lock.release() }
        let database = try TestServer.makeDatabase()
        defer { TestServer.dropDatabase(database.name, admin: database.admin) }
        let prefix = "app-\(UUID().uuidString.prefix(8))/"
        // A: no workers, proxies assets. B: the only worker, redirects to presigned URLs.
        let (a, spoolA) = try Self.instance(databaseURL: database.url, prefix: prefix, workers: 0, delivery: "proxy")
        defer {
            a.shutdown()
            a.wait()
            try? FileManager.default.removeItem(atPath: spoolA)
        }
        let (b, spoolB) = try Self.instance(databaseURL: database.url, prefix: prefix, workers: 1, delivery: "redirect")
        defer {
            b.shutdown()
            b.wait()
            try? FileManager.default.removeItem(atPath: spoolB)
        }

        let jpeg = try TestJPEG.make(width: 160, height: 120, seed: 71)
        let sha = SHA256.hash(data: jpeg).map { String(format: "%02x", $0) }.joined()
        let upload = try RawHTTPClient.exchange(
            port: a.port,
            head:
                "POST /parse/files/s3.jpg HTTP/1.1\r\nHost: x\r\nX-Parse-Application-Id: gallery\r\nX-Parse-Master-Key: \(TestServer.masterKey)\r\nContent-Type: image/jpeg\r\n"
                + "Content-Length: \(jpeg.count)\r\nConnection: close\r\n\r\n", body: jpeg)
        #expect(upload.status == 201)
        let create = try RawHTTPClient.exchange(
            port: a.port,
            head:
                "POST /parse/classes/Photo HTTP/1.1\r\nHost: x\r\nX-Parse-Application-Id: gallery\r\nX-Parse-Master-Key: \(TestServer.masterKey)\r\nContent-Type: application/json\r\n"
                + "Content-Length: \(#"{"original":{"__type":"File","name":"\#(sha).jpg"}}"#.utf8.count)\r\nConnection: close\r\n\r\n",
            body: Array(#"{"original":{"__type":"File","name":"\#(sha).jpg"}}"#.utf8))
        #expect(create.status == 201)
        let created = try JSONSerialization.jsonObject(with: Data(create.body)) as? [String: Any]
        let id = try #require(created?["objectId"] as? String)

        // B's worker picks the job up (A has none), reading the original from the bucket.
        let deadline = Date().addingTimeInterval(60)
        var status = ""
        while Date() < deadline {
            let photo = try Self.get(
                a.port, "/parse/classes/Photo/\(id)",
                headers: "X-Parse-Application-Id: gallery\r\nX-Parse-Master-Key: \(TestServer.masterKey)\r\n")
            status =
                ((try? JSONSerialization.jsonObject(with: Data(photo.body))) as? [String: Any])?["status"] as? String
                ?? ""
            if status == "ready" || status == "failed" { break }
            Thread.sleep(forTimeInterval: 0.1)
        }
        #expect(status == "ready")
        #expect(
            try S3TestEnvironment.boto3Keys(prefix: prefix) == [
                prefix + "originals/\(sha).jpg", prefix + "previews/\(id).jpg", prefix + "thumbnails/\(id).jpg",
            ])
        // Nothing in the local directories: the bucket is the store.
        #expect(!FileManager.default.fileExists(atPath: spoolA + "/originals/\(sha).jpg"))

        // A proxies: the whole original, a range, and 304 for its ETag.
        let original = try Self.get(a.port, "/bucket/originals/\(sha).jpg")
        #expect(original.status == 200)
        #expect(original.body == jpeg)
        #expect(original.headers["Content-Type"] == "image/jpeg")
        let etag = try #require(original.headers["ETag"])
        let range = try Self.get(a.port, "/bucket/originals/\(sha).jpg", headers: "Range: bytes=0-9\r\n")
        #expect(range.status == 206)
        #expect(range.body == Array(jpeg[0...9]))
        #expect(range.headers["Content-Range"] == "bytes 0-9/\(jpeg.count)")
        let cached = try Self.get(a.port, "/bucket/originals/\(sha).jpg", headers: "If-None-Match: \(etag)\r\n")
        #expect(cached.status == 304)
        let thumbnail = try Self.get(a.port, "/bucket/thumbnails/\(id).jpg")
        #expect(thumbnail.status == 200)
        let info = try ImageProbe.probe(bytes: thumbnail.body)
        #expect(info.width == 43 && info.height == 32)
        let missing = try Self.get(a.port, "/bucket/thumbnails/nothing.jpg")
        #expect(missing.status == 404)
        #expect(String(decoding: missing.body, as: UTF8.self).contains("<Code>NoSuchKey</Code>"))

        // A names its own bucket endpoint in file URLs; B, configured with public_asset_url, the CDN.
        let photoA = try Self.get(
            a.port, "/parse/classes/Photo/\(id)",
            headers: "X-Parse-Application-Id: gallery\r\nX-Parse-Master-Key: \(TestServer.masterKey)\r\n")
        let photoB = try Self.get(
            b.port, "/parse/classes/Photo/\(id)",
            headers: "X-Parse-Application-Id: gallery\r\nX-Parse-Master-Key: \(TestServer.masterKey)\r\n")
        let thumbnailA =
            ((try JSONSerialization.jsonObject(with: Data(photoA.body)) as? [String: Any])?["thumbnail"]
            as? [String: Any])?["url"] as? String
        let thumbnailB =
            ((try JSONSerialization.jsonObject(with: Data(photoB.body)) as? [String: Any])?["thumbnail"]
            as? [String: Any])?["url"] as? String
        #expect(thumbnailA?.hasSuffix("/bucket/thumbnails/\(id).jpg") == true)
        #expect(thumbnailB == "https://cdn.example.com/gallery/thumbnails/\(id).jpg")

        // B redirects to a short-lived presigned URL of the same object.
        let redirect = try Self.get(b.port, "/bucket/thumbnails/\(id).jpg")
        #expect(redirect.status == 307)
        let location = try #require(redirect.headers["Location"])
        #expect(
            location.hasPrefix(
                S3TestEnvironment.value("GALLERYD_TEST_S3_ENDPOINT")! + "/galleryd-test/\(prefix)thumbnails/\(id).jpg?")
        )
        #expect(location.contains("X-Amz-Signature="))
        #expect(location.contains("X-Amz-Expires=300"))

        // Trash, then purge through B: the blobs go from the bucket.
        let master = "X-Parse-Application-Id: gallery\r\nX-Parse-Master-Key: \(TestServer.masterKey)\r\n"
        #expect(
            try RawHTTPClient.exchange(
                port: b.port,
                head: "DELETE /parse/classes/Photo/\(id) HTTP/1.1\r\nHost: x\r\n\(master)Connection: close\r\n\r\n"
            ).status == 200)
        #expect(
            try RawHTTPClient.exchange(
                port: b.port,
                head: "DELETE /parse/purge/Photo/\(id) HTTP/1.1\r\nHost: x\r\n\(master)Connection: close\r\n\r\n"
            ).status == 200)
        #expect(try S3TestEnvironment.boto3Keys(prefix: prefix).isEmpty)
    }

    /// A server killed during a multipart upload leaves it open (bench/faults-s3.sh); the orphan
    /// collector aborts it once it is older than `orphan_grace_hours` (moto dates every upload in
    /// 2010, so here at once; S3BlobStoreTests checks the cutoff), and counts it.
    @Test func orphanCollector_AbortsAMultipartUploadAKilledServerLeft() throws {
        let prefix = "orphans-\(UUID().uuidString.prefix(8))/"
        try Self.withInstance(prefix: prefix) { application, _ in
            let s3 = try #require(application.blobs as? S3BlobStore)
            let id = try s3.client.createMultipartUpload("originals/" + String(repeating: "a", count: 64) + ".heic")
            let collector = OrphanCollector(trash: application.trash)
            #expect(try s3.client.listMultipartUploads().contains { $0.uploadId == id })
            #expect(try collector.collect(graceHours: 24).multipartUploads == 1)
            #expect(try !s3.client.listMultipartUploads().contains { $0.uploadId == id })
        }
    }

    /// A multipart pass its bound stopped is logged (notice) and the next goes on; one whose store
    /// cannot be reached is logged (warning) and returns, so the rest of the collector's pass runs.
    @Test func orphanCollector_LogsAMultipartPassStoppedByItsBoundOrAFailure() throws {
        let prefix = "orphans-\(UUID().uuidString.prefix(8))/"
        try Self.withInstance(prefix: prefix) { application, _ in
            let s3 = try #require(application.blobs as? S3BlobStore)
            for i in 0..<3 { _ = try s3.client.createMultipartUpload("originals/\(i).heic") }
            let capture = CapturingLogHandler()
            let trash = TrashService(pool: application.trash.pool, store: s3, logger: capture.logger())
            let collector = OrphanCollector(trash: trash)
            #expect(collector.abortMultipartUploads(s3, graceHours: 24, bound: 2) == 2)
            #expect(capture.lines.count == 1)
            let bound = capture.lines.first ?? ""
            #expect(bound.hasPrefix("multipart clean-up listed its bound of open uploads this pass"), "\(bound)")
            #expect(bound.contains("aborted=2 bound=2 listed=2 pages=1"), "\(bound)")
            #expect(collector.abortMultipartUploads(s3, graceHours: 24, bound: 2) == 1)
            #expect(capture.lines.count == 1, "a pass that reached the listing's end logs nothing here")
            #expect(try s3.client.listMultipartUploads().isEmpty)

            var down = s3.client.configuration
            down.endpoint = URL(string: "http://127.0.0.1:9")!
            down.retry = S3RetryPolicy(maxAttempts: 2, baseDelay: 0.01, maxDelay: 0.02)
            let stopped = S3BlobStore(configuration: down)
            let failing = OrphanCollector(
                trash: TrashService(pool: application.trash.pool, store: stopped, logger: capture.logger()))
            #expect(failing.abortMultipartUploads(stopped, graceHours: 24) == 0)
            let events = capture.events.withLock { $0 }
            #expect(events.count == 2)
            #expect(events.last?.level == .warning)
            #expect(events.last?.line.hasPrefix("multipart clean-up stopped: a request failed") == true)
            #expect(events.last?.line.contains("list-multipart") == true, "\(events.last?.line ?? "")")
        }
    }

    @Test func signedURLs_AreCheckedBeforeTheObjectStore_ByProxyAndByRedirect() throws {
        let lock = try ClusterLock.acquire()
        defer { lock.release() }
        let database = try TestServer.makeDatabase()
        defer { TestServer.dropDatabase(database.name, admin: database.admin) }
        let prefix = "signed-\(UUID().uuidString.prefix(8))/"
        let (a, spoolA) = try Self.instance(
            databaseURL: database.url, prefix: prefix, workers: 0, delivery: "proxy", bucketPublic: false)
        defer {
            a.shutdown()
            a.wait()
            try? FileManager.default.removeItem(atPath: spoolA)
        }
        let (b, spoolB) = try Self.instance(
            databaseURL: database.url, prefix: prefix, workers: 0, delivery: "redirect", bucketPublic: false)
        defer {
            b.shutdown()
            b.wait()
            try? FileManager.default.removeItem(atPath: spoolB)
        }
        let jpeg = try TestJPEG.make(width: 48, height: 32, seed: 77)
        func upload(_ port: Int) throws -> String {
            let answer = try RawHTTPClient.exchange(
                port: port,
                head:
                    "POST /parse/files/s.jpg HTTP/1.1\r\nHost: x\r\nX-Parse-Application-Id: gallery\r\nX-Parse-Master-Key: \(TestServer.masterKey)\r\nContent-Type: image/jpeg\r\n"
                    + "Content-Length: \(jpeg.count)\r\nConnection: close\r\n\r\n", body: jpeg)
            #expect(answer.status == 201 || answer.status == 200)
            let json = try JSONSerialization.jsonObject(with: Data(answer.body)) as? [String: Any]
            return try #require(json?["url"] as? String)
        }
        let signedA = try #require(URL(string: try upload(a.port)))
        let target = signedA.path
        let parts = try #require(SignedAssetURLTests.parts(target), "\(signedA)")
        // The CDN's URL (public_asset_url on B) is signed the same way: the signature names the bucket key, not the host.
        let signedB = try upload(b.port)
        #expect(signedB == "https://cdn.example.com/gallery/" + target.dropFirst("/bucket/".count))

        let proxied = try Self.get(a.port, target)
        #expect(proxied.status == 200)
        #expect(proxied.body == jpeg)
        #expect(try Self.get(a.port, target, headers: "Range: bytes=0-9\r\n").body == Array(jpeg[0...9]))
        let redirected = try Self.get(b.port, target)
        #expect(redirected.status == 307)
        #expect(redirected.headers["Location"]?.contains("X-Amz-Signature=") == true)
        let tampered = SignedAssetURLTests.path(parts.key, expires: parts.expires - 1, signature: parts.signature)
        let unsigned = "/bucket/" + parts.key
        for (port, path) in [(a.port, unsigned), (b.port, unsigned), (a.port, tampered), (b.port, tampered)] {
            let refused = try Self.get(port, path)
            #expect(refused.status == 403, "\(port) \(path)")
            #expect(String(decoding: refused.body, as: UTF8.self).contains("<Code>AccessDenied</Code>"))
            // No presigned URL is handed out for a refused request.
            #expect(refused.headers["Location"] == nil)
        }
    }

    /// A HEIC's and a PNG's originals uploaded to the bucket carry their own type there, so that
    /// `asset_delivery = "redirect"` (307 to a presigned URL of the object) and anything else reading
    /// the bucket serve them as `image/heic` and `image/png` (boto3 reads the type moto stored).
    @Test func uploadedOriginals_OfAHEICAndAPNG_AreStoredWithTheirOwnType() throws {
        let prefix = "formats-\(UUID().uuidString.prefix(8))/"
        try Self.withInstance(prefix: prefix, delivery: "redirect") { b, _ in
            let files = try UploadFormatTests.allFormats()
            for (ext, type) in [("heic", "image/heic"), ("png", "image/png")] {
                let bytes = files[ext]!
                let upload = try RawHTTPClient.exchange(
                    port: b.port,
                    head:
                        "POST /parse/files/photo HTTP/1.1\r\nHost: x\r\nX-Parse-Application-Id: gallery\r\nX-Parse-Master-Key: \(TestServer.masterKey)\r\n"
                        + "Content-Length: \(bytes.count)\r\nConnection: close\r\n\r\n", body: bytes)
                #expect(upload.status == 201, "\(ext)")
                let sha = SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
                let key = "originals/\(sha).\(ext)"
                let redirect = try Self.get(b.port, "/bucket/" + key)
                #expect(redirect.status == 307, "\(ext)")
                #expect(redirect.headers["Location"]?.contains("\(prefix)\(key)?") == true, "\(ext)")
                #expect(try S3TestEnvironment.boto3ContentType(prefix + key) == type, "\(ext)")
            }
        }
    }

    @Test func bucket_Answers503InS3XML_WhenTheObjectStoreIsDown_AndKeepsServing() throws {
        // Nothing listens on port 9 of loopback: every connect is refused.
        try Self.withInstance(prefix: "down/", endpoint: "http://127.0.0.1:9") { application, _ in
            let answer = try Self.get(application.port, "/bucket/thumbnails/Ab3dE5fG7h.jpg")
            #expect(answer.status == 503)
            #expect(String(decoding: answer.body, as: UTF8.self).contains("<Code>ServiceUnavailable</Code>"))
            #expect(
                try Self.get(
                    application.port, "/parse/health",
                    headers: "X-Parse-Application-Id: gallery\r\nX-Parse-Master-Key: \(TestServer.masterKey)\r\n"
                ).status == 200)
        }
    }

    @Test func orphanCollector_ListsTheBucket_AndRemovesDerivativesWithoutAPhoto() throws {
        let prefix = "orphans-\(UUID().uuidString.prefix(8))/"
        try Self.withInstance(prefix: prefix) { application, spool in
            let jpeg = try TestJPEG.make(width: 48, height: 32, seed: 95)
            let sha = SHA256.hash(data: jpeg).map { String(format: "%02x", $0) }.joined()
            let path = spool + "/.tmp/upload-test"
            try Data(jpeg).write(to: URL(fileURLWithPath: path))
            _ = try application.uploads.storeFile(
                at: path, sha256: sha, byteSize: jpeg.count, originalFilename: "o.jpg")
            let photo = try application.uploads.createPhoto(fileName: "\(sha).jpg", title: "", tags: [])
            try application.blobs.put(BlobKey.thumbnail(objectId: photo.objectId), bytes: [1, 2, 3])
            try application.blobs.put(BlobKey.thumbnail(objectId: "Zz9Zz9Zz9Z"), bytes: [4, 5, 6])
            try application.blobs.put(BlobKey.preview(objectId: "Yy8Yy8Yy8Y"), bytes: [7])
            let collected = try OrphanCollector(trash: application.trash).collect(
                graceHours: 1000, derivativeMinAge: -60)
            #expect(collected.derivatives == 2)
            #expect(
                try S3TestEnvironment.boto3Keys(prefix: prefix) == [
                    prefix + "originals/\(sha).jpg", prefix + "thumbnails/\(photo.objectId).jpg",
                ])
        }
    }
}
