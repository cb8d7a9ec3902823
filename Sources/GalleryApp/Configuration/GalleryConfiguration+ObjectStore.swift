import BlobStore
import Foundation

extension GalleryConfiguration {
    /// With `storage = "s3"`, asks the object store once (a one-key listing, no retries, 10 s
    /// timeout) and turns a refusal into an error naming the setting to fix: the endpoint that
    /// does not answer, the access key or secret the store does not accept, the bucket that does not
    /// exist, the region it lives in. What `check-config --serving` runs; nothing for local storage.
    public func checkObjectStore() throws {
        guard storage == "s3" else { return }
        var settings = try GalleryApplication.s3Configuration(self)
        settings.retry = S3RetryPolicy(maxAttempts: 1, timeout: 10)
        let client = S3Client(configuration: settings)
        do {
            try client.checkBucket()
        } catch BlobStoreError.unavailable(_, _, let message) {
            throw ConfigurationError.invalid(key: "s3_endpoint", reason: "\(s3Endpoint) does not answer: \(message)")
        } catch BlobStoreError.remote(_, _, let status, let code, let message) {
            let said = "the store answered \(status) \(code)" + (message.isEmpty ? "" : ": \(message)")
            switch code {
            case "InvalidAccessKeyId":
                throw ConfigurationError.invalid(
                    key: "s3_access_key_id", reason: "\"\(s3AccessKeyId)\" is not a key the store knows (\(said))")
            case "SignatureDoesNotMatch":
                throw ConfigurationError.invalid(
                    key: "s3_secret_access_key", reason: "not accepted for access key \"\(s3AccessKeyId)\" (\(said))")
            case "NoSuchBucket":
                throw ConfigurationError.invalid(
                    key: "s3_bucket", reason: "\"\(s3Bucket)\" does not exist at \(s3Endpoint) (\(said))")
            case "AuthorizationHeaderMalformed", "PermanentRedirect", "IllegalLocationConstraintException":
                throw ConfigurationError.invalid(
                    key: "s3_region", reason: "\"\(s3Region)\" is not the bucket's region (\(said))")
            case "AccessDenied", "AllAccessDisabled":
                throw ConfigurationError.invalid(
                    key: "s3_access_key_id",
                    reason:
                        "\"\(s3AccessKeyId)\" may not list bucket \"\(s3Bucket)\" (s3:ListBucket; see docker/s3-policy.json) (\(said))"
                )
            default:
                throw ConfigurationError.invalid(
                    key: "s3_endpoint", reason: "\(s3Endpoint): bucket \"\(s3Bucket)\": \(said)")
            }
        }
    }
}
