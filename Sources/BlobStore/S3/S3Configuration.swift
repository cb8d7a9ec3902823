import Foundation

/// Where and how to reach an S3-compatible bucket (AWS S3, MinIO, Ceph RGW, Garage, R2, B2).
public struct S3Configuration: Sendable, Equatable {
    /// The endpoint's base URL, e.g. `http://127.0.0.1:9000` or `https://s3.eu-west-1.amazonaws.com`.
    public var endpoint: URL
    /// The region that goes into the signature scope (`us-east-1` for most non-AWS servers).
    public var region: String
    /// The bucket name.
    public var bucket: String
    /// The access key id.
    public var accessKeyId: String
    /// The secret access key (never logged).
    public var secretAccessKey: String
    /// Path-style URLs (`host/bucket/key`, what MinIO and moto expect) instead of virtual-hosted
    /// ones (`bucket.host/key`).
    public var pathStyle: Bool
    /// A prefix put before every key (e.g. `galleryd/`), so one bucket can hold several galleries.
    public var prefix: String
    /// Files larger than this are sent as a multipart upload. Default 64 MiB.
    public var multipartThreshold: Int64
    /// Size of each multipart part (S3 asks for at least 5 MiB except the last). Default 16 MiB.
    public var multipartPartSize: Int64
    /// Retries and timeouts.
    public var retry: S3RetryPolicy

    /// A configuration with the defaults above.
    public init(
        endpoint: URL, region: String = "us-east-1", bucket: String, accessKeyId: String, secretAccessKey: String,
        pathStyle: Bool = true, prefix: String = "", multipartThreshold: Int64 = 64 << 20,
        multipartPartSize: Int64 = 16 << 20, retry: S3RetryPolicy = S3RetryPolicy()
    ) {
        self.endpoint = endpoint
        self.region = region
        self.bucket = bucket
        self.accessKeyId = accessKeyId
        self.secretAccessKey = secretAccessKey
        self.pathStyle = pathStyle
        self.prefix = prefix
        self.multipartThreshold = multipartThreshold
        self.multipartPartSize = multipartPartSize
        self.retry = retry
    }

    /// The `Host` header value: host, plus the port when it is not the scheme's default.
    var hostHeader: String {
        let host = endpoint.host ?? "localhost"
        let base = pathStyle ? host : bucket + "." + host
        if let port = endpoint.port, !(endpoint.scheme == "http" && port == 80),
            !(endpoint.scheme == "https" && port == 443)
        {
            return base + ":" + String(port)
        }
        return base
    }

    /// The request path (not yet percent-encoded segments joined) of an object key, or of the
    /// bucket itself when `key` is nil.
    func unencodedPath(objectKey key: String?) -> String {
        let basePath = endpoint.path.hasSuffix("/") ? String(endpoint.path.dropLast()) : endpoint.path
        let bucketPart = pathStyle ? "/" + bucket : ""
        guard let key else { return basePath + bucketPart + (pathStyle ? "" : "/") }
        return basePath + bucketPart + "/" + key
    }
}
