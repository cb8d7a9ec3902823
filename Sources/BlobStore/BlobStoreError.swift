/// What went wrong in the blob store.
public enum BlobStoreError: Error, CustomStringConvertible, Equatable {
    /// A key that could escape the store or is malformed.
    case invalidKey(String, reason: String)
    /// No blob under that key.
    case notFound(String)
    /// A file-system call failed; the operation, the path and `strerror(errno)`.
    case io(operation: String, path: String, message: String)

    public var description: String {
        switch self {
        case .invalidKey(let key, let reason): return "invalid key \"\(key)\": \(reason)"
        case .notFound(let key): return "no blob \"\(key)\""
        case .io(let operation, let path, let message): return "\(operation) \(path): \(message)"
        }
    }
}
