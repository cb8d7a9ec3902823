import Foundation
import Synchronization

/// A blob store in an S3-compatible bucket. A PUT is atomic in S3 (a key holds either the old or the
/// complete new object), so the protocol's promise holds without temporary keys. Files above
/// `multipartThreshold` go up as a multipart upload, aborted when any step fails so no parts are
/// left behind. Every request is signed with our own SigV4 and retried per `S3RetryPolicy`.
public final class S3BlobStore: BlobStore, Sendable {
    /// The S3 calls underneath.
    public let client: S3Client
    private let written = Atomic<Int64>(0)
    /// Where the next clean-up pass of open multipart uploads starts: after the last upload a pass
    /// that stopped early (its bound, a failure) handled; nil to start at the top.
    let multipartCursor = Mutex<S3MultipartMarker?>(nil)

    /// A store on the bucket of `configuration` (the bucket must exist; nothing is created).
    public init(configuration: S3Configuration, transport: S3Transport? = nil) {
        client = S3Client(configuration: configuration, transport: transport)
    }

    public var bytesWritten: Int64 {
        written.load(ordering: .relaxed)
    }

    @discardableResult
    public func put(_ key: BlobKey, movingFileAt path: String) throws -> BlobInfo {
        try put(key, movingFileAt: path, sha256: nil)
    }

    /// Uploads a finished file under `key` and removes the file. `sha256` is the file's SHA-256
    /// (hex) when the caller already computed it while spooling (uploads do), so the file is not
    /// read twice; it is the payload hash S3 verifies.
    @discardableResult
    public func put(_ key: BlobKey, movingFileAt path: String, sha256: String? = nil) throws -> BlobInfo {
        let size = try Self.fileSize(path)
        let etag: String
        if size > client.configuration.multipartThreshold {
            etag = try putMultipart(key, path: path, size: size)
        } else {
            let hash = try sha256 ?? S3Client.sha256Hex(file: path)
            etag = try client.putObject(
                key.rawValue, body: .file(path: path, offset: 0, length: size), payloadHash: hash,
                contentType: Self.contentType(key))
        }
        unlink(path)
        count(size)
        return BlobInfo(size: size, modified: Date(), etag: etag)
    }

    @discardableResult
    public func put(_ key: BlobKey, bytes: [UInt8]) throws -> BlobInfo {
        let etag = try client.putObject(
            key.rawValue, body: .bytes(bytes), payloadHash: S3Client.sha256Hex(bytes),
            contentType: Self.contentType(key))
        count(Int64(bytes.count))
        return BlobInfo(size: Int64(bytes.count), modified: Date(), etag: etag)
    }

    /// Multipart upload in parts of `multipartPartSize`, each with its own SHA-256; aborted on failure.
    private func putMultipart(_ key: BlobKey, path: String, size: Int64) throws -> String {
        let partSize = min(max(client.configuration.multipartPartSize, S3Limits.minPartSize), S3Limits.maxPartSize)
        let parts = (size + partSize - 1) / partSize
        guard parts <= S3Limits.maxParts else {
            throw BlobStoreError.io(
                operation: "multipart-upload", path: key.rawValue,
                message:
                    "\(size) bytes in parts of \(partSize) would be \(parts) parts; S3 allows \(S3Limits.maxParts) (raise s3_multipart_part_bytes)"
            )
        }
        let uploadId = try client.createMultipartUpload(key.rawValue, contentType: Self.contentType(key))
        do {
            var etags: [String] = []
            var offset: Int64 = 0
            while offset < size {
                let length = min(partSize, size - offset)
                let hash = try S3Client.sha256Hex(file: path, offset: offset, length: length)
                etags.append(
                    try client.uploadPart(
                        key.rawValue, uploadId: uploadId, number: etags.count + 1,
                        body: .file(path: path, offset: offset, length: length), payloadHash: hash))
                offset += length
            }
            return try client.completeMultipartUpload(key.rawValue, uploadId: uploadId, partETags: etags)
        } catch {
            try? client.abortMultipartUpload(key.rawValue, uploadId: uploadId)
            throw error
        }
    }

    public func info(_ key: BlobKey) throws -> BlobInfo? {
        guard let head = try client.headObject(key.rawValue) else { return nil }
        return Self.info(head)
    }

    /// Always nil: the bytes are not in a local file (callers stream them with `read`).
    public func localPath(_ key: BlobKey) throws -> String? { nil }

    @discardableResult
    public func delete(_ key: BlobKey) throws -> Bool {
        let existed = try client.headObject(key.rawValue) != nil
        try client.deleteObject(key.rawValue)
        return existed
    }

    /// Deletes many keys with DeleteObjects (1000 per request); throws when the store refused any.
    public func delete(_ keys: [BlobKey]) throws {
        let failures = try client.deleteObjects(keys.map(\.rawValue))
        if let (key, code) = failures.first {
            throw BlobStoreError.remote(
                operation: "delete-objects", key: key, status: 200, code: code,
                message: "\(failures.count) keys not deleted")
        }
    }

    /// Streams the blob (or `range`, e.g. `bytes=0-99`) to `sink` chunk by chunk; returns the
    /// answer's head (status 200 or 206, `content-length`, `content-range`, `etag`), or nil when absent.
    public func read(_ key: BlobKey, range: String? = nil, sink: (UnsafeRawBufferPointer) throws -> Void) throws
        -> S3HTTPResponse?
    {
        try client.getObject(key.rawValue, range: range, sink: sink)
    }

    /// The whole blob in memory, or nil when absent (for small blobs only).
    public func bytes(_ key: BlobKey) throws -> [UInt8]? { try client.getObjectBytes(key.rawValue) }

    /// Copies the blob into a new file at `path` (e.g. the worker's spool), refusing blobs over
    /// `maxBytes` before downloading anything. Returns the blob's info, or nil when absent.
    /// Without a limit (`Int64.max`) no HEAD is sent first: one request per download.
    public func download(_ key: BlobKey, toFileAt path: String, maxBytes: Int64) throws -> BlobInfo? {
        if maxBytes < Int64.max {
            guard let head = try client.headObject(key.rawValue) else { return nil }
            let size = Self.info(head).size
            guard size <= maxBytes else {
                throw BlobStoreError.io(
                    operation: "download", path: key.rawValue,
                    message: "blob of \(size) bytes is over the spool limit \(maxBytes)")
            }
        }
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw BlobStoreError.io(operation: "open", path: path, message: String(cString: strerror(errno)))
        }
        defer { close(fd) }
        var received: Int64 = 0
        let response = try client.getObject(
            key.rawValue,
            sink: { chunk in
                received += Int64(chunk.count)
                guard received <= maxBytes else {
                    throw BlobStoreError.io(
                        operation: "download", path: key.rawValue, message: "more than \(maxBytes) bytes")
                }
                var offset = 0
                while offset < chunk.count {
                    let n = write(fd, chunk.baseAddress! + offset, chunk.count - offset)
                    if n < 0 {
                        if errno == EINTR { continue }
                        throw BlobStoreError.io(
                            operation: "write", path: path, message: String(cString: strerror(errno)))
                    }
                    offset += n
                }
            })
        guard let response else { return nil }
        return Self.info(response)
    }

    public func withLocalFile<T>(_ key: BlobKey, spoolDirectory: String, maxBytes: Int64, _ body: (String) throws -> T)
        throws -> T?
    {
        let path = spoolDirectory + "/s3-" + UUID().uuidString
        defer { unlink(path) }
        guard try download(key, toFileAt: path, maxBytes: maxBytes) != nil else { return nil }
        return try body(path)
    }

    /// The blobs whose keys start with `prefix` (e.g. `thumbnails/`), with their modification times.
    public func list(prefix: String) throws -> [(key: String, modified: Date)] {
        try client.listObjects(prefix: prefix)
    }

    /// A presigned GET URL for the blob, valid for `expires` seconds (what `asset_delivery =
    /// "redirect"` answers with).
    public func presignedURL(_ key: BlobKey, expires: Int) -> URL {
        client.presignedURL(key.rawValue, expires: expires)
    }

    private func count(_ bytes: Int64) {
        written.add(bytes, ordering: .relaxed)
    }

    private static func info(_ head: S3HTTPResponse) -> BlobInfo {
        let size: Int64
        if let range = head.header("content-range"), let total = range.split(separator: "/").last,
            let value = Int64(total)
        {
            size = value
        } else {
            size = Int64(head.header("content-length") ?? "0") ?? 0
        }
        let modified =
            head.header("last-modified").flatMap { httpDateFormatter.date(from: $0) } ?? Date(timeIntervalSince1970: 0)
        return BlobInfo(size: size, modified: modified, etag: head.header("etag") ?? "")
    }

    private static let httpDateFormatter: DateFormatter = {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        return formatter
    }()

    /// The `Content-Type` an object is stored with, by its key's extension (any case): the type a
    /// client gets when it reads the bucket itself (a redirect to a presigned URL, a CDN, boto3), as
    /// galleryd's own bucket route serves it. Originals of every accepted format, JPEG derivatives.
    static func contentType(_ key: BlobKey) -> String {
        guard let dot = key.rawValue.lastIndex(of: ".") else { return "application/octet-stream" }
        switch key.rawValue[key.rawValue.index(after: dot)...].lowercased() {
        case "jpg", "jpeg": return "image/jpeg"
        case "png": return "image/png"
        case "webp": return "image/webp"
        case "heic", "heif": return "image/heic"
        case "avif": return "image/avif"
        default: return "application/octet-stream"
        }
    }

    private static func fileSize(_ path: String) throws -> Int64 {
        var st = stat()
        guard stat(path, &st) == 0 else {
            throw BlobStoreError.io(operation: "stat", path: path, message: String(cString: strerror(errno)))
        }
        return Int64(st.st_size)
    }
}
