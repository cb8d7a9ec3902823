import Crypto
import Foundation
import Testing

@testable import BlobStore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `S3BlobStore` and `S3Client` against the real moto server that scripts/test.sh starts with
/// authentication on; boto3 checks independently what landed.
@Suite(.enabled(if: S3TestServer.isProvided, S3TestServer.skipReason), .serialized)
struct S3BlobStoreTests {
    private func randomBytes(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }

    private func sha256(_ bytes: [UInt8]) -> String { S3Signer.hex(SHA256.hash(data: bytes)) }

    private func temporaryFile(_ bytes: [UInt8]) throws -> String {
        let path = NSTemporaryDirectory() + "s3-test-" + UUID().uuidString
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func put_StoresTheBytes_ThatBoto3ReadsBack() throws {
        let configuration = S3TestServer.configuration()
        let store = S3BlobStore(configuration: configuration)
        let bytes = randomBytes(200_000)
        let key = try BlobKey("thumbnails/Ab3dE5fG7h.jpg")
        let info = try store.put(key, bytes: bytes)
        #expect(info.size == 200_000)
        #expect(try S3TestServer.boto3SHA256(configuration.prefix + key.rawValue) == sha256(bytes))
        let head = try #require(try store.info(key))
        #expect(head.size == 200_000)
        #expect(head.etag == info.etag)
        #expect(try store.bytes(key) == bytes)
        #expect(try store.info(BlobKey("thumbnails/missing.jpg")) == nil)
        #expect(store.bytesWritten == 200_000)
    }

    /// Each format's original is stored with its own type, whole or in parts, so that a client
    /// reading the bucket itself (redirected to a presigned URL, or boto3) gets `image/heic`, not
    /// `application/octet-stream`.
    @Test func put_StoresEachFormatsContentType_WholeOrInParts() throws {
        let configuration = S3TestServer.configuration(multipartThreshold: 5 << 20)
        let store = S3BlobStore(configuration: configuration)
        let cases = [
            ("originals/a.heic", "image/heic"), ("originals/b.png", "image/png"), ("originals/c.webp", "image/webp"),
            ("originals/d.avif", "image/avif"), ("originals/e.jpg", "image/jpeg"), ("thumbnails/f.jpg", "image/jpeg"),
            ("originals/g.HEIF", "image/heic"), ("misc/h.bin", "application/octet-stream"),
        ]
        for (name, _) in cases {
            try store.put(BlobKey(name), bytes: [1, 2, 3])
        }
        let large = randomBytes(6 << 20)  // over the threshold: a multipart upload
        try store.put(BlobKey("originals/large.heic"), movingFileAt: temporaryFile(large), sha256: sha256(large))
        let keys = cases.map(\.0) + ["originals/large.heic"]
        let printed = try S3TestServer.boto3(
            "print(json.dumps([s3.head_object(Bucket=bucket, Key=k)['ContentType'] for k in args]))",
            keys.map { configuration.prefix + $0 })
        let types = try JSONDecoder().decode([String].self, from: Data(printed.utf8))
        #expect(types == cases.map(\.1) + ["image/heic"])
    }

    @Test func putMovingFile_UploadsWithItsSHA256_AndRemovesTheFile() throws {
        let configuration = S3TestServer.configuration()
        let store = S3BlobStore(configuration: configuration)
        let bytes = randomBytes(300_001)
        let path = try temporaryFile(bytes)
        let key = try BlobKey.original(sha256: sha256(bytes))
        try store.put(key, movingFileAt: path, sha256: sha256(bytes))
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(try S3TestServer.boto3SHA256(configuration.prefix + key.rawValue) == sha256(bytes))
    }

    @Test func read_ServesARange() throws {
        let store = S3BlobStore(configuration: S3TestServer.configuration())
        let bytes = randomBytes(10_000)
        let key = try BlobKey("previews/r.jpg")
        try store.put(key, bytes: bytes)
        var received = [UInt8]()
        let head = try #require(try store.read(key, range: "bytes=100-199") { received.append(contentsOf: $0) })
        #expect(head.status == 206)
        #expect(received == Array(bytes[100...199]))
        #expect(head.header("content-range") == "bytes 100-199/10000")
        #expect(try store.read(BlobKey("previews/none.jpg")) { _ in } == nil)
    }

    @Test func keysWithSpacesAndUnicode_AreSignedCorrectly_AndLandUnderTheirName() throws {
        let configuration = S3TestServer.configuration()
        let client = S3Client(configuration: configuration)
        let key = "albums/Summer 2024/été ☀️ + plage (1)&=.jpg"
        let bytes = randomBytes(1000)
        try client.putObject(key, body: .bytes(bytes), payloadHash: sha256(bytes))
        #expect(try S3TestServer.boto3Keys(prefix: configuration.prefix) == [configuration.prefix + key])
        #expect(try S3TestServer.boto3SHA256(configuration.prefix + key) == sha256(bytes))
        #expect(try client.getObjectBytes(key) == bytes)
        #expect(try client.headObject(key)?.header("content-length") == "1000")

        // The presigned URL carries the signature botocore computes for the same request and time
        // (moto cannot check presigned URLs while IAM authentication is on).
        let url = client.presignedURL(key, expires: 60)
        #expect(
            try S3TestServer.botocorePresignedSignature(of: url)
                == URLComponents(url: url, resolvingAgainstBaseURL: false)?
                .queryItems?.first { $0.name == "X-Amz-Signature" }?.value)
        try client.deleteObject(key)
        #expect(try S3TestServer.boto3Keys(prefix: configuration.prefix).isEmpty)
    }

    @Test func wrongSecret_FailsWithA403_AndIsNotRetried() throws {
        let configuration = S3TestServer.configuration(secret: "not-the-secret")
        let client = S3Client(configuration: configuration)
        var failure: BlobStoreError?
        do {
            try client.putObject("x.jpg", body: .bytes([1, 2, 3]), payloadHash: sha256([1, 2, 3]))
        } catch let error as BlobStoreError {
            failure = error
        }
        guard case .remote(_, _, let status, let code, _)? = failure else {
            Issue.record("expected a remote error, got \(String(describing: failure))")
            return
        }
        #expect(status == 403)
        #expect(code == "SignatureDoesNotMatch")
        #expect(client.retries == 0)
        #expect(try S3TestServer.boto3Keys(prefix: configuration.prefix).isEmpty)
    }

    @Test func injected503s_AreRetriedWithBackOff_UntilTheStoreAnswers() throws {
        let configuration = S3TestServer.configuration()
        let base = S3Client(configuration: configuration).transport
        let faults = FaultInjectingTransport(base, failFirst: 2, status: 503, code: "SlowDown")
        let store = S3BlobStore(configuration: configuration, transport: faults)
        let key = try BlobKey("previews/retry.jpg")
        try store.put(key, bytes: [9, 8, 7])
        #expect(faults.requestCount == 3)
        #expect(store.client.retries == 2)
        #expect(try S3TestServer.boto3SHA256(configuration.prefix + key.rawValue) == sha256([9, 8, 7]))
    }

    @Test func persistent503s_GiveUpAfterMaxAttempts() throws {
        let configuration = S3TestServer.configuration(
            retry: S3RetryPolicy(maxAttempts: 3, baseDelay: 0.01, maxDelay: 0.02))
        let faults = FaultInjectingTransport(S3Client(configuration: configuration).transport, failFirst: 100)
        let store = S3BlobStore(configuration: configuration, transport: faults)
        #expect(
            throws: BlobStoreError.remote(
                operation: "put", key: "previews/x.jpg", status: 503, code: "SlowDown", message: "injected")
        ) {
            try store.put(BlobKey("previews/x.jpg"), bytes: [1])
        }
        #expect(faults.requestCount == 3)
    }

    @Test func aSilentServer_TimesOut_AndIsReportedUnavailable() throws {
        // A listening socket nobody accepts from: connects succeed (the kernel's backlog), reads time out.
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(listener) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) }
        }
        listen(listener, 16)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        let port = Int(UInt16(bigEndian: address.sin_port))
        let configuration = S3Configuration(
            endpoint: URL(string: "http://127.0.0.1:\(port)")!, bucket: "b", accessKeyId: "k", secretAccessKey: "s",
            retry: S3RetryPolicy(maxAttempts: 2, baseDelay: 0.01, maxDelay: 0.01, timeout: 0.3))
        let client = S3Client(configuration: configuration)
        var failure: Error?
        do { _ = try client.headObject("x") } catch { failure = error }
        guard case .unavailable? = failure as? BlobStoreError else {
            Issue.record("expected unavailable, got \(String(describing: failure))")
            return
        }
        #expect(client.retries == 1)
    }

    @Test func multipart_UploadsLargeFilesInParts() throws {
        let configuration = S3TestServer.configuration(multipartThreshold: 6 << 20)
        let store = S3BlobStore(configuration: configuration)
        let bytes = randomBytes(12 << 20 + 12345)
        let path = try temporaryFile(bytes)
        let key = try BlobKey("originals/big.jpg")
        let info = try store.put(key, movingFileAt: path)
        #expect(info.etag.hasSuffix("-3\""))  // three parts: 5 MiB, 5 MiB, the rest
        #expect(try S3TestServer.boto3SHA256(configuration.prefix + key.rawValue) == sha256(bytes))
        #expect(try store.info(key)?.size == Int64(bytes.count))
        #expect(try store.client.listMultipartUploads().filter { $0.key.hasPrefix(configuration.prefix) }.isEmpty)
    }

    /// A process killed -9 between CreateMultipartUpload and CompleteMultipartUpload leaves the upload
    /// open (bench/faults-s3.sh): those under the store's directories started before the cutoff are
    /// aborted, younger ones and those elsewhere in the bucket are left. (moto dates every upload
    /// `2010-11-10T20:48:33.000Z`, so the cutoffs are either side of that; an unreadable date would
    /// count as now and abort nothing.)
    @Test func abortMultipartUploads_AbortsTheStaleOnesUnderItsDirectories() throws {
        let configuration = S3TestServer.configuration(multipartThreshold: 6 << 20)
        let store = S3BlobStore(configuration: configuration)
        let killed = try store.client.createMultipartUpload("originals/killed.heic")
        let elsewhere = try store.client.createMultipartUpload("backups/not-ours.bin")
        defer { try? store.client.abortMultipartUpload("backups/not-ours.bin", uploadId: elsewhere) }
        func open() throws -> Set<String> {
            Set(
                try store.client.listMultipartUploads().filter { $0.key.hasPrefix(configuration.prefix) }.map(
                    \.uploadId))
        }
        #expect(try open() == [killed, elsewhere])
        let initiated = try #require(try store.client.listMultipartUploads().first { $0.uploadId == killed }?.initiated)
        #expect(store.abortMultipartUploads(startedBefore: initiated, directories: ["originals"]).aborted == 0)
        #expect(try open() == [killed, elsewhere])
        let later = initiated.addingTimeInterval(1)
        #expect(later < Date().addingTimeInterval(-3600), "moto's fixed date, or a date read wrong")
        #expect(store.abortMultipartUploads(startedBefore: later, directories: ["originals"]).aborted == 1)
        #expect(try open() == [elsewhere])
    }

    @Test func multipart_IsAborted_WhenAPartFails() throws {
        let configuration = S3TestServer.configuration(multipartThreshold: 6 << 20)
        let faults = FaultInjectingTransport(
            S3Client(configuration: configuration).transport, failTargetsContaining: "partNumber=2")
        let store = S3BlobStore(configuration: configuration, transport: faults)
        let path = try temporaryFile(randomBytes(11 << 20))
        defer { unlink(path) }
        let key = try BlobKey("originals/aborted.jpg")
        #expect(throws: BlobStoreError.self) { try store.put(key, movingFileAt: path) }
        #expect(faults.requests.contains { $0.hasPrefix("DELETE") && $0.contains("uploadId=") })
        #expect(try store.client.listMultipartUploads().filter { $0.key.hasPrefix(configuration.prefix) }.isEmpty)
        #expect(try store.info(key) == nil)
        #expect(FileManager.default.fileExists(atPath: path), "a failed put leaves the source file for a retry")
    }

    @Test func delete_RemovesOneOrManyKeys() throws {
        let configuration = S3TestServer.configuration()
        let store = S3BlobStore(configuration: configuration)
        let keys = try (0..<5).map { try BlobKey("thumbnails/k\($0).jpg") }
        for key in keys { try store.put(key, bytes: [1]) }
        #expect(try store.delete(keys[0]) == true)
        #expect(try store.delete(keys[0]) == false)
        try store.delete(Array(keys[1...]))
        #expect(try S3TestServer.boto3Keys(prefix: configuration.prefix).isEmpty)
    }

    @Test func download_SpoolsToAFile_AndRefusesBlobsOverTheLimit() throws {
        let store = S3BlobStore(configuration: S3TestServer.configuration())
        let bytes = randomBytes(50_000)
        let key = try BlobKey("originals/spool.jpg")
        try store.put(key, bytes: bytes)
        let path = NSTemporaryDirectory() + "s3-spool-" + UUID().uuidString
        defer { unlink(path) }
        #expect(try store.download(key, toFileAt: path, maxBytes: 1 << 20)?.size == 50_000)
        #expect(try Array(Data(contentsOf: URL(fileURLWithPath: path))) == bytes)
        #expect(throws: BlobStoreError.self) { try store.download(key, toFileAt: path, maxBytes: 1000) }
        #expect(try store.download(BlobKey("originals/none.jpg"), toFileAt: path, maxBytes: 1000) == nil)
    }

    @Test func urlSessionTransport_SpeaksTheSameProtocol() throws {
        let configuration = S3TestServer.configuration()
        let store = S3BlobStore(
            configuration: configuration,
            transport: S3URLSessionTransport(endpoint: configuration.endpoint, timeout: 10))
        let bytes = randomBytes(20_000)
        let key = try BlobKey("previews/us.jpg")
        try store.put(key, bytes: bytes)
        #expect(try store.bytes(key) == bytes)
        #expect(try S3TestServer.boto3SHA256(configuration.prefix + key.rawValue) == sha256(bytes))
    }

    /// GET with URLSession: body and status.
    static func fetch(_ url: URL) throws -> (Data, Int) {
        let semaphore = DispatchSemaphore(value: 0)
        // @unchecked: written by the completion handler before it signals, read after the wait.
        final class Box: @unchecked Sendable {
            var data = Data()
            var status = 0
        }
        let box = Box()
        URLSession.shared.dataTask(with: url) { data, response, _ in
            box.data = data ?? Data()
            box.status = (response as? HTTPURLResponse)?.statusCode ?? 0
            semaphore.signal()
        }.resume()
        semaphore.wait()
        return (box.data, box.status)
    }
}
