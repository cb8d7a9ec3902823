import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Open descriptors and `fstat` results of recently read blobs, like nginx's `open_file_cache`:
/// a hit costs a `dup(2)` instead of a path walk and an `fstat`. Bounded in entries (least recently
/// used evicted first); the store invalidates a key when it writes or deletes it, so a deleted blob
/// is gone at once. Entries older than `revalidateAfter` are checked with an `fstat` of the cached
/// descriptor (no link left: deleted by another process, such as a separate `galleryd worker`).
///
/// Ownership: the cache owns its descriptors and closes them on eviction; a reader gets its own
/// `dup`, which it closes, and sends from it with explicit offsets (the duplicate shares the file
/// position, so nothing may rely on it).
final class BlobDescriptorCache: @unchecked Sendable {
    private struct Entry {
        let fd: Int32
        let status: FileStatus
        var lastUse: UInt64
        var checked: UInt64
    }

    /// Most descriptors kept open.
    let capacity: Int
    private let revalidateNanoseconds: UInt64
    private let lock = NSLock()
    private var entries: [String: Entry] = [:]
    private var tick: UInt64 = 0
    /// Bumped by every invalidation, so a reader that opened a file before a delete cannot put the
    /// deleted file's descriptor into the cache after the delete has invalidated it.
    private var generation: UInt64 = 0
    private var hitCount = 0

    /// A cache of at most `capacity` descriptors, revalidated after `revalidateAfter` seconds.
    init(capacity: Int, revalidateAfter: Double = 1) {
        self.capacity = max(1, capacity)
        self.revalidateNanoseconds = UInt64(max(0, revalidateAfter) * 1e9)
    }

    deinit {
        for entry in entries.values { close(entry.fd) }
    }

    /// Hits so far (tests and metrics).
    var hits: Int { lock.withLock { hitCount } }

    /// Descriptors held open now.
    var count: Int { lock.withLock { entries.count } }

    /// The generation to pass to `insert` after opening a file.
    var currentGeneration: UInt64 { lock.withLock { generation } }

    /// A duplicate of the cached descriptor (the caller owns it) and the cached status, or nil.
    func lookup(_ key: String) -> (fd: Int32, status: FileStatus)? {
        let now = Self.now()
        lock.lock()
        defer { lock.unlock() }
        guard var entry = entries[key] else { return nil }
        if now &- entry.checked > revalidateNanoseconds {
            var st = FileStatus()
            guard fstat(entry.fd, &st) == 0, st.st_nlink > 0, st.st_ino == entry.status.st_ino else {
                entries[key] = nil
                close(entry.fd)
                return nil
            }
            entry.checked = now
        }
        let copy = fcntl(entry.fd, F_DUPFD_CLOEXEC, 0)
        guard copy >= 0 else { return nil }
        tick &+= 1
        entry.lastUse = tick
        entries[key] = entry
        hitCount += 1
        return (copy, entry.status)
    }

    /// Keeps a duplicate of `fd` (the caller keeps its own) unless `key` was invalidated since
    /// `generation` was read; evicts the least recently used eighth when full.
    func insert(_ key: String, fd: Int32, status: FileStatus, generation seen: UInt64) {
        lock.lock()
        defer { lock.unlock() }
        guard seen == generation, entries[key] == nil else { return }
        if entries.count >= capacity { evictOldest(max(1, capacity / 8)) }
        let copy = fcntl(fd, F_DUPFD_CLOEXEC, 0)
        guard copy >= 0 else { return }
        tick &+= 1
        let now = Self.now()
        entries[key] = Entry(fd: copy, status: status, lastUse: tick, checked: now)
    }

    /// Forgets `key` (after a write or delete of it), closing its descriptor.
    func invalidate(_ key: String) {
        lock.lock()
        defer { lock.unlock() }
        generation &+= 1
        if let entry = entries.removeValue(forKey: key) { close(entry.fd) }
    }

    /// Closes every cached descriptor.
    func removeAll() {
        lock.lock()
        defer { lock.unlock() }
        generation &+= 1
        for entry in entries.values { close(entry.fd) }
        entries.removeAll()
    }

    private func evictOldest(_ n: Int) {
        let victims = entries.sorted { $0.value.lastUse < $1.value.lastUse }.prefix(n)
        for (key, entry) in victims {
            close(entry.fd)
            entries[key] = nil
        }
    }

    private static func now() -> UInt64 {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return UInt64(t.tv_sec) * 1_000_000_000 + UInt64(t.tv_nsec)
    }
}
