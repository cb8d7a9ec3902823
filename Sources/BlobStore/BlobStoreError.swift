/// What went wrong in the blob store.
public enum BlobStoreError: Error, CustomStringConvertible, Equatable {
    /// A key that could escape the store or is malformed.
    case invalidKey(String, reason: String)
    /// No blob under that key.
    case notFound(String)
    /// A file-system call failed; the operation, the path and `strerror(errno)`.
    case io(operation: String, path: String, message: String)
    /// The file system is full (`ENOSPC`) or the quota is used up (`EDQUOT`): a fault that freeing
    /// space cures, so callers answer 507 and retry later instead of failing for good.
    case insufficientStorage(operation: String, path: String)
    /// The object store answered with an error: the operation, the key (or bucket), the HTTP status,
    /// and the S3 error code and message from the XML body (e.g. `SignatureDoesNotMatch`).
    case remote(operation: String, key: String, status: Int, code: String, message: String)
    /// The object store could not be reached or stopped answering (connect failure, reset, timeout)
    /// after every retry: a fault of the surroundings, like a full disk.
    case unavailable(operation: String, key: String, message: String)

    public var description: String {
        switch self {
        case .invalidKey(let key, let reason): return "invalid key \"\(key)\": \(reason)"
        case .notFound(let key): return "no blob \"\(key)\""
        case .io(let operation, let path, let message): return "\(operation) \(path): \(message)"
        case .insufficientStorage(let operation, let path): return "\(operation) \(path): no space left on device"
        case .remote(let operation, let key, let status, let code, let message):
            return
                "\(operation) \(key): object store answered \(status) \(code)\(message.isEmpty ? "" : ": " + message)"
        case .unavailable(let operation, let key, let message):
            return "\(operation) \(key): object store unavailable: \(message)"
        }
    }
}
