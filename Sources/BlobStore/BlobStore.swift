import Foundation

/// Where photo bytes live. Writes are atomic: a key is either absent or holds the complete
/// bytes, never a partial file. Implementations: `LocalBlobStore` (a directory) and `S3BlobStore`
/// (an S3-compatible bucket).
public protocol BlobStore: Sendable {
    /// Moves a finished file (e.g. an upload's temporary file) into the store under `key`,
    /// durably. The source must be on the same filesystem or it is copied first.
    /// Returns the stored blob's metadata.
    @discardableResult
    func put(_ key: BlobKey, movingFileAt path: String) throws -> BlobInfo
    /// Stores bytes under `key`, durably, replacing any earlier blob.
    @discardableResult
    func put(_ key: BlobKey, bytes: [UInt8]) throws -> BlobInfo
    /// Metadata of the blob, or nil when absent.
    func info(_ key: BlobKey) throws -> BlobInfo?
    /// A local file path holding the blob's bytes (for sendfile), or nil when absent.
    func localPath(_ key: BlobKey) throws -> String?
    /// Removes the blob; removing a missing blob is not an error. Returns whether it existed.
    @discardableResult
    func delete(_ key: BlobKey) throws -> Bool
    /// Bytes written by this store since it started (for metrics).
    var bytesWritten: Int64 { get }
    /// Like `put(_:movingFileAt:)`, with the file's SHA-256 (hex) when the caller computed it while
    /// spooling: an object store sends it as the payload hash and verifies the bytes with it.
    @discardableResult
    func put(_ key: BlobKey, movingFileAt path: String, sha256: String?) throws -> BlobInfo
    /// Runs `body` with the path of a local file holding the blob: the store's own file for a local
    /// store, a temporary copy in `spoolDirectory` (refused over `maxBytes`, removed afterwards) for a
    /// remote one. Returns nil when the blob is absent.
    func withLocalFile<T>(_ key: BlobKey, spoolDirectory: String, maxBytes: Int64, _ body: (String) throws -> T) throws
        -> T?
}

extension BlobStore {
    @discardableResult
    public func put(_ key: BlobKey, movingFileAt path: String, sha256: String?) throws -> BlobInfo {
        try put(key, movingFileAt: path)
    }

    public func withLocalFile<T>(_ key: BlobKey, spoolDirectory: String, maxBytes: Int64, _ body: (String) throws -> T)
        throws -> T?
    {
        guard let path = try localPath(key) else { return nil }
        return try body(path)
    }
}

/// What the store knows about a blob.
public struct BlobInfo: Sendable, Equatable {
    /// Size in bytes.
    public var size: Int64
    /// Last modification time.
    public var modified: Date
    /// A strong entity tag, unique to these bytes at this path (`"<mtime-ns hex>-<size hex>"`, as nginx does).
    public var etag: String

    public init(size: Int64, modified: Date, etag: String) {
        self.size = size
        self.modified = modified
        self.etag = etag
    }
}
