import BlobStore
import Foundation
import Logging
import Synchronization

/// Bounds the rendered display sizes to `size_cache_bytes`, least recently used out first.
///
/// The list is `photo_sizes` (migration 0023), shared by every instance on the database. A warm
/// request costs no database work: it only marks its blob key here, in memory, and the marks are
/// written (one `update … = any($1)`) before each eviction, which follows every render. So the LRU
/// order is exact at the granularity of renders, which is when it matters.
final class SizeCache: Sendable {
    private let repository: SizeRepository
    private let store: any BlobStore
    /// Most bytes of renditions kept (the newest always stays, so 0 keeps one).
    let limitBytes: Int64
    private let touched = Mutex<Set<String>>([])
    /// The eviction round: moved on before each eviction takes the marks (starts at 1, which no
    /// newly opened file's mark holds).
    private let round = Atomic<UInt64>(1)
    private let metrics: SizeMetrics
    private let logger: Logger

    /// A cache over `store` listed in `repository`, bounded to `limitBytes`.
    init(repository: SizeRepository, store: any BlobStore, limitBytes: Int64, metrics: SizeMetrics, logger: Logger) {
        self.repository = repository
        self.store = store
        self.limitBytes = max(0, limitBytes)
        self.metrics = metrics
        self.logger = logger
    }

    /// Notes that `blobKey` was served (kept in memory until the next eviction).
    func touch(_ blobKey: String) {
        touched.withLock { _ = $0.insert(blobKey) }
    }

    /// Notes that `blobKey` was served from `file` (open, from the store's open-file cache): only
    /// the first time in this eviction round that this file is served, found by the round number
    /// swapped into the file's mark, so a warm size costs an atomic exchange rather than a lock
    /// and a hash of its key. A file opened anew (no open-file cache, or evicted from it) has
    /// mark 0 and is noted again.
    func touch(_ blobKey: String, servedFrom file: BlobFile) {
        let current = round.load(ordering: .relaxed)
        if file.mark.exchange(current, ordering: .relaxed) != current { touch(blobKey) }
    }

    /// Lists a rendition just written; false when its photo is gone (the caller deletes the blob).
    func record(_ entry: SizeRepository.Entry) throws -> Bool {
        try repository.record(entry)
    }

    /// Writes the pending marks, then removes least recently used renditions until at most
    /// `limitBytes` stay listed (never `kept`, the newest): rows first, then their blobs. Updates
    /// the bytes gauge.
    func evict(keeping kept: String) throws {
        // A file served from now on is noted again, for the next eviction.
        round.wrappingAdd(1, ordering: .relaxed)
        let keys = touched.withLock { touched -> [String] in
            defer { touched.removeAll(keepingCapacity: true) }
            return Array(touched)
        }
        try repository.touch(keys)
        let victims = try repository.evict(toAtMost: limitBytes, keeping: kept)
        for victim in victims {
            do { _ = try store.delete(BlobKey(victim.blobKey)) } catch {
                logger.warning(
                    "size eviction could not delete a blob",
                    metadata: ["key": "\(victim.blobKey)", "error": "\(error)"])
            }
        }
        metrics.evictions.increment(Double(victims.count))
        metrics.cacheBytes.set(Double(try repository.totalBytes()))
    }

    /// Removes every rendition of a photo, rows then blobs (its pixels are about to change, or it
    /// is being purged). Static, so the worker and the trash need no cache instance.
    static func remove(photoId: String, repository: SizeRepository, store: any BlobStore) throws {
        for entry in try repository.remove(photoId: photoId) {
            _ = try? store.delete(BlobKey(entry.blobKey))
        }
    }
}
