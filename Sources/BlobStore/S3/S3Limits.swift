/// Limits of the S3 API that every S3-compatible store enforces (AWS's "Amazon S3 multipart upload
/// limits"): checked before a request would be refused half way through an upload.
public enum S3Limits {
    /// The smallest part of a multipart upload but the last: 5 MiB.
    public static let minPartSize: Int64 = 5 << 20
    /// The largest part: 5 GiB.
    public static let maxPartSize: Int64 = 5 << 30
    /// The most parts one multipart upload may have.
    public static let maxParts: Int64 = 10_000
}
