import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Recently read blobs kept open with their `fstat` results, like nginx's `open_file_cache`: a
/// hit costs a dictionary lookup under a lock and a reference count, no system call. Bounded in
/// entries (least recently used evicted first); the store invalidates a key when it writes or
/// deletes it, so a deleted blob is gone at once. Entries older than `revalidateAfter` are
/// checked with an `fstat` of the cached descriptor (no link left: deleted by another process,
/// such as a separate `galleryd worker`).
///
/// Ownership: entries are `BlobFile`s, shared with the readers; an evicted or invalidated entry's
/// descriptor closes when the last response still sending from it is done.
final class BlobDescriptorCache: Sendable {
    private struct Entry {
        let file: BlobFile
        let inode: ino_t
        var lastUse: UInt64
        var checked: UInt64
    }

    /// Most descriptors kept open.
    let capacity: Int
    private let revalidateNanoseconds: UInt64
    private let state = Mutex(State())

    /// What the mutex guards.
    private struct State {
        /// By key, hashed once from its bytes (`HashedKey`): a lookup may come from a request
        /// path's bytes in place, with the hash the signature check computed.
        var entries: [HashedKey: Entry] = [:]
        var tick: UInt64 = 0
        /// Bumped by every invalidation, so a reader that opened a file before a delete cannot put the
        /// deleted file's descriptor into the cache after the delete has invalidated it.
        var generation: UInt64 = 0
        var hitCount = 0

        mutating func evictOldest(_ n: Int) {
            let victims = entries.sorted { $0.value.lastUse < $1.value.lastUse }.prefix(n)
            for (key, _) in victims { entries[key] = nil }
        }
    }

    /// A cache of at most `capacity` descriptors, revalidated after `revalidateAfter` seconds.
    init(capacity: Int, revalidateAfter: Double = 1) {
        self.capacity = max(1, capacity)
        self.revalidateNanoseconds = UInt64(max(0, revalidateAfter) * 1e9)
    }

    /// Hits so far (tests and metrics).
    var hits: Int { state.withLock { $0.hitCount } }

    /// Descriptors held open now.
    var count: Int { state.withLock { $0.entries.count } }

    /// The generation to pass to `insert` after opening a file.
    var currentGeneration: UInt64 { state.withLock { $0.generation } }

    /// The cached file, or nil.
    func lookup(_ key: String) -> BlobFile? { lookup(HashedKey(key))?.file }

    /// The cached file and its key's text as the cache holds it (so a caller that looked it up
    /// from bytes needs no String of its own), or nil.
    func lookup(_ key: HashedKey) -> (text: String, file: BlobFile)? {
        let now = Self.now()
        return state.withLock { state -> (text: String, file: BlobFile)? in
            // One lookup of the key per hit: the entry is found once and updated in place by its index.
            guard let index = state.entries.index(forKey: key) else { return nil }
            let entry = state.entries.values[index]
            if now &- entry.checked > revalidateNanoseconds {
                var st = FileStatus()
                guard fstat(entry.file.fd, &st) == 0, st.st_nlink > 0, st.st_ino == entry.inode else {
                    state.entries.remove(at: index)
                    return nil
                }
                state.entries.values[index].checked = now
            }
            state.tick &+= 1
            state.entries.values[index].lastUse = state.tick
            state.hitCount += 1
            // Stored keys own their text (`insert`).
            return (state.entries.keys[index].text!, entry.file)
        }
    }

    /// Keeps `file` unless `key` was invalidated since `generation` was read; evicts the least
    /// recently used eighth when full.
    func insert(_ key: String, file: BlobFile, inode: ino_t, generation seen: UInt64) {
        let now = Self.now()
        let key = HashedKey(key)
        state.withLock { state in
            guard seen == state.generation, state.entries[key] == nil else { return }
            if state.entries.count >= capacity { state.evictOldest(max(1, capacity / 8)) }
            state.tick &+= 1
            state.entries[key] = Entry(file: file, inode: inode, lastUse: state.tick, checked: now)
        }
    }

    /// Forgets `key` (after a write or delete of it).
    func invalidate(_ key: String) {
        let key = HashedKey(key)
        state.withLock { state in
            state.generation &+= 1
            state.entries[key] = nil
        }
    }

    /// Forgets every entry.
    func removeAll() {
        state.withLock { state in
            state.generation &+= 1
            state.entries.removeAll()
        }
    }

    private static func now() -> UInt64 {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return UInt64(t.tv_sec) * 1_000_000_000 + UInt64(t.tv_nsec)
    }
}
