import Foundation
import Synchronization

/// The cluster lock while it is held (see `ClusterLock.acquire`). Closing the descriptor releases
/// it: `release()` does so at once, `deinit` as a fallback.
public final class ClusterLockHold: Sendable {
    /// The lock file's descriptor; -1 once released.
    private let fileDescriptor: Atomic<Int32>

    /// Owns `fileDescriptor`, an open lock file already locked.
    init(fileDescriptor: Int32) {
        self.fileDescriptor = Atomic(fileDescriptor)
    }

    /// Releases the lock; later calls do nothing.
    public func release() {
        let fd = fileDescriptor.exchange(-1, ordering: .relaxed)
        if fd >= 0 { close(fd) }
    }

    deinit { release() }
}
