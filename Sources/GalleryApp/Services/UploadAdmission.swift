import BlobStore
import Foundation
import Synchronization

/// Decides from an upload's head whether its body may be spooled, and keeps count while it does:
/// enough free space on the store's file system (`min_free_bytes`); room in the budget of bytes
/// that uploads in progress may spool together (`max_spool_bytes`), reserved as bytes arrive (a
/// first quota at the head, grown a quota at a time), so uploads that trickle in hold what they
/// sent, not the upload limit; and at most `max_uploads_per_user` uploads at once for one user and
/// `max_uploads_per_address` for one client address. Runs on event-loop threads, so it only does
/// a `statvfs` and locked arithmetic.
public final class UploadAdmission: Sendable {
    /// The numbers, each with its reason.
    public struct Limits: Sendable {
        /// Most bytes uploads in progress may spool together.
        public var maxSpoolBytes: Int
        /// Free bytes the store's file system keeps in reserve.
        public var minFreeBytes: Int64
        /// Largest upload.
        public var maxUploadBytes: Int
        /// What an upload reserves at its head, and each step it grows by as bytes arrive: 1 MiB,
        /// a photo's first part, and few enough lock round trips per upload.
        public var quotaBytes = 1 << 20
        /// Uploads one user may have in progress at once (0: no cap).
        public var maxPerUser = 0
        /// Uploads one client address may have in progress at once (0: no cap).
        public var maxPerAddress = 0

        /// Limits with these budgets and no caps on uploads at once.
        public init(maxSpoolBytes: Int, minFreeBytes: Int64, maxUploadBytes: Int) {
            self.maxSpoolBytes = maxSpoolBytes
            self.minFreeBytes = minFreeBytes
            self.maxUploadBytes = maxUploadBytes
        }
    }

    /// Who sends an upload, for the caps on uploads at once.
    public struct Sender: Sendable {
        /// The user (or, before its session is known here, the session token's hash); nil for none.
        public var user: String?
        /// The client's address (host only); nil for none.
        public var address: String?

        /// A sender with these keys.
        public init(user: String?, address: String?) {
            self.user = user
            self.address = address
        }
    }

    /// Bytes and upload slots held by one admitted upload; given back when the reservation is
    /// released (with its request).
    // @unchecked: `bytes` changes only in `cover`, called on the request's event loop thread.
    public final class Reservation: @unchecked Sendable {
        /// Bytes reserved so far (at least those received).
        public private(set) var bytes: Int
        private let keys: [String]
        weak var owner: UploadAdmission?

        init(bytes: Int, keys: [String], owner: UploadAdmission) {
            self.bytes = bytes
            self.keys = keys
            self.owner = owner
        }

        /// Makes sure `received` bytes are reserved, growing the reservation by a quota when they
        /// are not; throws `InsufficientStorage` when the budget or the disk has no room for it.
        /// Called from one thread at a time (the request's event loop).
        public func cover(_ received: Int) throws {
            guard received > bytes, let owner else { return }
            let target = max(received, min(owner.limits.maxUploadBytes, received + owner.limits.quotaBytes))
            try owner.grow(from: bytes, by: target - bytes)
            bytes = target
        }

        deinit { owner?.release(bytes, keys: keys) }
    }

    let store: LocalBlobStore
    let limits: Limits
    private let state = Mutex(State())

    /// What the uploads in progress hold, under the mutex.
    private struct State {
        /// Bytes reserved by uploads in progress.
        var spooling = 0
        /// Uploads in progress per capped key (`user:…`, `address:…`).
        var uploadsByKey: [String: Int] = [:]
    }

    /// An admission over `store` with the configured limits.
    public init(store: LocalBlobStore, limits: Limits) {
        self.store = store
        self.limits = limits
    }

    /// An admission over `store` with these budgets and no caps on uploads at once.
    public convenience init(store: LocalBlobStore, maxSpoolBytes: Int, minFreeBytes: Int64, maxUploadBytes: Int) {
        self.init(
            store: store,
            limits: Limits(maxSpoolBytes: maxSpoolBytes, minFreeBytes: minFreeBytes, maxUploadBytes: maxUploadBytes))
    }

    /// Bytes reserved by uploads in progress.
    public var spoolingBytes: Int { state.withLock { $0.spooling } }

    /// Free bytes on the store's file system, or nil when unknown (then nothing is refused for it).
    public var freeBytes: Int64? { store.availableBytes() }

    /// Whether the store has at least `min_free_bytes` free beyond `extra` bytes; throws
    /// `InsufficientStorage` otherwise.
    public func checkFreeSpace(needing extra: Int = 0) throws {
        guard let free = freeBytes else { return }
        if free - Int64(extra) < limits.minFreeBytes {
            throw InsufficientStorage(
                "Insufficient storage: the server's disk is nearly full (\(max(0, free)) bytes free, "
                    + "\(limits.minFreeBytes) kept in reserve). Try again later.")
        }
    }

    /// Admits an upload of `contentLength` bytes (nil when chunked) from `sender`, reserving its
    /// first quota; throws `TooManyUploads` past a cap on uploads at once, `InsufficientStorage`
    /// when the disk cannot take the declared length or the budget has no room for the quota. The
    /// returned reservation holds its bytes and slots until released.
    public func admit(contentLength: Int?, from sender: Sender = Sender(user: nil, address: nil)) throws -> Reservation
    {
        let declared = min(contentLength ?? 0, limits.maxUploadBytes)
        try checkFreeSpace(needing: declared)
        let bytes = min(contentLength ?? limits.quotaBytes, limits.quotaBytes, limits.maxUploadBytes)
        var capped: [(key: String, cap: Int)] = []
        if let user = sender.user, limits.maxPerUser > 0 { capped.append(("user:" + user, limits.maxPerUser)) }
        if let address = sender.address, limits.maxPerAddress > 0 {
            capped.append(("address:" + address, limits.maxPerAddress))
        }
        try state.withLock { state in
            if let full = capped.first(where: { (state.uploadsByKey[$0.key] ?? 0) >= $0.cap }) {
                throw TooManyUploads(
                    "Too many uploads in progress for this \(full.key.hasPrefix("user:") ? "user" : "address") "
                        + "(at most \(full.cap) at once). Try again when one has finished.")
            }
            // One upload alone always fits, however large the budget is set against the upload limit.
            guard state.spooling == 0 || state.spooling + bytes <= limits.maxSpoolBytes else {
                throw InsufficientStorage("Insufficient storage: too many uploads in progress. Try again shortly.")
            }
            state.spooling += bytes
            for entry in capped { state.uploadsByKey[entry.key, default: 0] += 1 }
        }
        return Reservation(bytes: bytes, keys: capped.map(\.key), owner: self)
    }

    /// Adds `extra` bytes to a reservation of `held` bytes, or throws `InsufficientStorage`.
    fileprivate func grow(from held: Int, by extra: Int) throws {
        try checkFreeSpace(needing: extra)
        try state.withLock { state in
            // Alone, an upload may grow to the upload limit whatever the budget.
            guard state.spooling == held || state.spooling + extra <= limits.maxSpoolBytes else {
                throw InsufficientStorage("Insufficient storage: too many uploads in progress. Try again shortly.")
            }
            state.spooling += extra
        }
    }

    fileprivate func release(_ bytes: Int, keys: [String]) {
        state.withLock { state in
            state.spooling -= bytes
            for key in keys {
                let left = (state.uploadsByKey[key] ?? 1) - 1
                state.uploadsByKey[key] = left > 0 ? left : nil
            }
        }
    }
}
