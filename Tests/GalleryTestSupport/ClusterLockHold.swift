import Foundation

/// The cluster lock while it is held (see `ClusterLock.acquire`). Closing the descriptor releases
/// it: `release()` does so at once, `deinit` as a fallback.
public final class ClusterLockHold: @unchecked Sendable {
    private let lock = NSLock()
    private var fileDescriptor: Int32

    /// Owns `fileDescriptor`, an open lock file already locked.
    init(fileDescriptor: Int32) {
        self.fileDescriptor = fileDescriptor
    }

    /// Releases the lock; later calls do nothing.
    public func release() {
        lock.lock()
        defer { lock.unlock() }
        if fileDescriptor >= 0 {
            close(fileDescriptor)
            fileDescriptor = -1
        }
    }

    deinit { release() }
}
