import BlobStore
import Foundation

/// Decides from an upload's head alone whether its body may be spooled: enough free space on the
/// store's file system (`min_free_bytes`), and room in the budget of bytes that uploads in progress
/// may spool together (`max_spool_bytes`). Runs on event-loop threads, so it only does a `statvfs`
/// and a locked addition.
public final class UploadAdmission: @unchecked Sendable {
    /// Bytes held by one admitted upload; given back when the reservation is released (with its request).
    public final class Reservation: @unchecked Sendable {
        let bytes: Int
        weak var owner: UploadAdmission?

        init(bytes: Int, owner: UploadAdmission) {
            self.bytes = bytes
            self.owner = owner
        }

        deinit { owner?.release(bytes) }
    }

    let store: LocalBlobStore
    let maxSpoolBytes: Int
    let minFreeBytes: Int64
    let maxUploadBytes: Int
    private let lock = NSLock()
    private var spooling = 0

    /// An admission over `store` with the configured limits.
    public init(store: LocalBlobStore, maxSpoolBytes: Int, minFreeBytes: Int64, maxUploadBytes: Int) {
        self.store = store
        self.maxSpoolBytes = maxSpoolBytes
        self.minFreeBytes = minFreeBytes
        self.maxUploadBytes = maxUploadBytes
    }

    /// Bytes reserved by uploads in progress.
    public var spoolingBytes: Int { lock.withLock { spooling } }

    /// Free bytes on the store's file system, or nil when unknown (then nothing is refused for it).
    public var freeBytes: Int64? { store.availableBytes() }

    /// Whether the store has at least `min_free_bytes` free beyond `extra` bytes; throws
    /// `InsufficientStorage` otherwise.
    public func checkFreeSpace(needing extra: Int = 0) throws {
        guard let free = freeBytes else { return }
        if free - Int64(extra) < minFreeBytes {
            throw InsufficientStorage(
                "Insufficient storage: the server's disk is nearly full (\(max(0, free)) bytes free, "
                    + "\(minFreeBytes) kept in reserve). Try again later.")
        }
    }

    /// Admits an upload of `contentLength` bytes (nil when chunked: counted at the upload limit),
    /// or throws `InsufficientStorage`. The returned reservation holds the bytes until released.
    public func admit(contentLength: Int?) throws -> Reservation {
        let bytes = min(contentLength ?? maxUploadBytes, maxUploadBytes)
        try checkFreeSpace(needing: bytes)
        let admitted = lock.withLock { () -> Bool in
            // One upload alone always fits, however large the budget is set against the upload limit.
            guard spooling == 0 || spooling + bytes <= maxSpoolBytes else { return false }
            spooling += bytes
            return true
        }
        guard admitted else {
            throw InsufficientStorage("Insufficient storage: too many uploads in progress. Try again shortly.")
        }
        return Reservation(bytes: bytes, owner: self)
    }

    fileprivate func release(_ bytes: Int) {
        lock.withLock { spooling -= bytes }
    }
}
