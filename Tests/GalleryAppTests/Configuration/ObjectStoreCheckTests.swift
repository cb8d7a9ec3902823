import BlobStore
import Foundation
import Testing

@testable import GalleryApp

/// `check-config --serving` with `storage = "s3"` asks the store (moto, authentication on) and
/// names the setting that is wrong; the multipart part size honours S3's 5 MiB and 10,000 parts.
@Suite(.enabled(if: S3TestEnvironment.isProvided, S3TestEnvironment.skipReason))
struct ObjectStoreCheckTests {
    private static func configuration(_ change: (inout GalleryConfiguration) -> Void = { _ in }) -> GalleryConfiguration
    {
        var configuration = GalleryConfiguration()
        S3TestEnvironment.configure(&configuration, prefix: "check/")
        change(&configuration)
        return configuration
    }

    /// The key the check's error names, or nil when it passed.
    private static func failingKey(_ configuration: GalleryConfiguration) -> (key: String, text: String)? {
        do {
            try configuration.checkObjectStore()
            return nil
        } catch ConfigurationError.invalid(let key, let reason) {
            return (key, reason)
        } catch {
            return ("unexpected", "\(error)")
        }
    }

    @Test func checkObjectStore_Passes_ForTheTestBucket_AndIgnoresLocalStorage() throws {
        try Self.configuration().checkObjectStore()
        try Self.configuration {
            $0.storage = "local"
            $0.s3Endpoint = "http://127.0.0.1:9"
        }.checkObjectStore()
    }

    @Test func checkObjectStore_NamesTheSetting_TheStoreRefused() throws {
        let unreachable = Self.failingKey(Self.configuration { $0.s3Endpoint = "http://127.0.0.1:9" })
        #expect(unreachable?.key == "s3_endpoint")
        #expect(unreachable?.text.contains("does not answer") == true, "\(String(describing: unreachable))")

        let unknownKey = Self.failingKey(Self.configuration { $0.s3AccessKeyId = "AKIANOSUCHKEY0000000" })
        #expect(unknownKey?.key == "s3_access_key_id", "\(String(describing: unknownKey))")
        #expect(unknownKey?.text.contains("InvalidAccessKeyId") == true)

        let wrongSecret = Self.failingKey(Self.configuration { $0.s3SecretAccessKey = "not-the-secret" })
        #expect(wrongSecret?.key == "s3_secret_access_key", "\(String(describing: wrongSecret))")
        #expect(wrongSecret?.text.contains("SignatureDoesNotMatch") == true)

        let noBucket = Self.failingKey(
            Self.configuration { $0.s3Bucket = "no-such-bucket-\(UInt32.random(in: 0...UInt32.max))" })
        #expect(noBucket?.key == "s3_bucket", "\(String(describing: noBucket))")
        #expect(noBucket?.text.contains("does not exist") == true)
    }

    @Test func checkConfigServing_ExitsWith2_NamingTheBucket_AndPassesWithTheRightOne() throws {
        func run(bucket: String) throws -> (Int32, String, String) {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: try ImportTests.galleryd())
            process.arguments = ["check-config", "--serving"]
            var environment = ProcessInfo.processInfo.environment.filter {
                !$0.key.hasPrefix("GALLERYD_") || $0.key.hasPrefix("GALLERYD_TEST_")
            }
            environment["DATABASE_URL"] = "postgresql://localhost/unused"
            environment["GALLERYD_MASTER_KEY"] = "check-master-key-0123456789"
            environment["GALLERYD_URL_SIGNING_KEY"] = TestServer.urlSigningKey
            environment["GALLERYD_STORAGE"] = "s3"
            environment["GALLERYD_S3_ENDPOINT"] = S3TestEnvironment.value("GALLERYD_TEST_S3_ENDPOINT")
            environment["GALLERYD_S3_BUCKET"] = bucket
            environment["GALLERYD_S3_ACCESS_KEY_ID"] = S3TestEnvironment.value("GALLERYD_TEST_S3_ACCESS_KEY")
            environment["GALLERYD_S3_SECRET_ACCESS_KEY"] = S3TestEnvironment.value("GALLERYD_TEST_S3_SECRET_KEY")
            process.environment = environment
            let out = Pipe()
            let err = Pipe()
            process.standardOutput = out
            process.standardError = err
            try process.run()
            let outData = out.fileHandleForReading.readDataToEndOfFile()
            let errData = err.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return (
                process.terminationStatus, String(decoding: outData, as: UTF8.self),
                String(decoding: errData, as: UTF8.self)
            )
        }
        let missing = try run(bucket: "absent-bucket")
        #expect(missing.0 == 2)
        #expect(missing.2.contains("config: s3_bucket: \"absent-bucket\" does not exist"), "\(missing.2)")
        let good = try run(bucket: S3TestEnvironment.value("GALLERYD_TEST_S3_BUCKET") ?? "galleryd-test")
        #expect(good.0 == 0, "\(good.2)")
        // The secret is masked in what it prints.
        #expect(good.1.contains("s3_secret_access_key = \"********\""))
        #expect(!good.1.contains(S3TestEnvironment.value("GALLERYD_TEST_S3_SECRET_KEY")!))
    }

    @Test func multipartPartBytes_HonoursS3Limits() throws {
        // Under 5 MiB: refused by the key's range.
        #expect(throws: ConfigurationError.self) {
            try GalleryConfiguration.load(file: nil, environment: ["GALLERYD_S3_MULTIPART_PART_BYTES": "4194304"])
        }
        // 64 GiB uploads in 5 MiB parts would be 13,108 parts: refused naming the key and the least size that fits.
        var configuration = try GalleryConfiguration.load(
            file: nil,
            environment: ["GALLERYD_S3_MULTIPART_PART_BYTES": "5242880", "GALLERYD_MAX_UPLOAD_BYTES": "68719476736"])
        #expect(
            throws: ConfigurationError.invalid(
                key: "s3_multipart_part_bytes",
                reason:
                    "5242880 bytes makes 13108 parts of a max_upload_bytes (68719476736) upload; S3 allows 10,000: use at least 6871948"
            )
        ) { try configuration.validateMultipartParts() }
        configuration.s3MultipartPartBytes = 6_871_948
        try configuration.validateMultipartParts()
        // The S3 settings carry it to the store.
        S3TestEnvironment.configure(&configuration, prefix: "parts/")
        #expect(try GalleryApplication.s3Configuration(configuration).multipartPartSize == 6_871_948)
    }

    @Test func multipartUpload_UsesTheConfiguredPartSize_AndRefusesMoreThan10000Parts() throws {
        var configuration = Self.configuration { $0.s3Prefix = "parts-\(UUID().uuidString.prefix(8))/" }
        configuration.s3MultipartBytes = 5 << 20
        configuration.s3MultipartPartBytes = 5 << 20
        let store = S3BlobStore(configuration: try GalleryApplication.s3Configuration(configuration))
        let directory = NSTemporaryDirectory() + "galleryd-parts-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }

        // 11 MiB in 5 MiB parts: three parts (S3's multipart ETag ends in -3).
        let path = directory + "/eleven"
        try Data((0..<(11 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) }).write(to: URL(fileURLWithPath: path))
        let key = try BlobKey("originals/eleven.jpg")
        try store.put(key, movingFileAt: path)
        let info = try #require(try store.info(key))
        #expect(info.etag.hasSuffix("-3\""), "\(info.etag)")
        #expect(info.size == 11 << 20)

        // A (sparse) file of 10,000 parts and one byte is refused before anything is sent.
        let huge = directory + "/huge"
        let fd = open(huge, O_WRONLY | O_CREAT, 0o600)
        #expect(ftruncate(fd, off_t(10_000 * (5 << 20) + 1)) == 0)
        close(fd)
        let hugeKey = try BlobKey("originals/huge.jpg")
        #expect {
            try store.put(hugeKey, movingFileAt: huge)
        } throws: { error in
            "\(error)".contains("10001 parts; S3 allows 10000")
        }
        #expect(try store.client.listMultipartUploads().allSatisfy { !$0.key.hasSuffix("huge.jpg") })
        #expect(try store.info(hugeKey) == nil)
        try store.delete([key])
    }
}
