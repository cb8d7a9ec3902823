import BlobStore
import Foundation

/// The object store settings: which store `storage` names, and the S3 settings checked key by key.
extension GalleryApplication {
    /// The blob store `storage` names: the local directory store, or an `S3BlobStore` with the
    /// secret from `s3_secret_access_key` or the file `s3_secret_access_key_file`.
    public static func makeBlobStore(configuration: GalleryConfiguration, local: LocalBlobStore) throws -> any BlobStore
    {
        guard configuration.storage == "s3" else { return local }
        return S3BlobStore(configuration: try s3Configuration(configuration))
    }

    /// The S3 settings of `configuration` (`storage` aside), with the secret read from
    /// `s3_secret_access_key` or the file `s3_secret_access_key_file`; throws naming the key that is
    /// missing or does not fit.
    public static func s3Configuration(_ configuration: GalleryConfiguration) throws -> S3Configuration {
        var secret = configuration.s3SecretAccessKey ?? ""
        if secret.isEmpty, !configuration.s3SecretAccessKeyFile.isEmpty {
            guard let text = try? String(contentsOfFile: configuration.s3SecretAccessKeyFile, encoding: .utf8) else {
                throw ConfigurationError.invalidValue(
                    key: "s3_secret_access_key_file", value: configuration.s3SecretAccessKeyFile,
                    reason: "cannot be read")
            }
            secret = text.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        guard let endpoint = URL(string: configuration.s3Endpoint), endpoint.host != nil else {
            throw ConfigurationError.invalidValue(
                key: "s3_endpoint", value: configuration.s3Endpoint, reason: "storage = \"s3\" needs an endpoint URL")
        }
        guard !configuration.s3Bucket.isEmpty else {
            throw ConfigurationError.invalidValue(
                key: "s3_bucket", value: "", reason: "storage = \"s3\" needs a bucket")
        }
        try configuration.validateMultipartParts()
        return S3Configuration(
            endpoint: endpoint, region: configuration.s3Region, bucket: configuration.s3Bucket,
            accessKeyId: configuration.s3AccessKeyId, secretAccessKey: secret, pathStyle: configuration.s3PathStyle,
            prefix: configuration.s3Prefix, multipartThreshold: Int64(configuration.s3MultipartBytes),
            multipartPartSize: Int64(configuration.s3MultipartPartBytes))
    }
}
