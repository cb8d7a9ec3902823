import BlobStore
import Foundation
import Imaging
import Logging
import Postgres

/// Makes a photo's thumbnail and preview and records them: the body of a derivatives job.
/// Running it again for the same photo is harmless (same keys, same row values).
public struct PhotoProcessor: Sendable {
    let pool: PostgresPool
    let store: any BlobStore
    /// The local directory store whose temporary directory spools originals read from a remote
    /// store (and whose abandoned temporary files the workers sweep).
    let spool: LocalBlobStore
    let spec: DerivativeSpec
    let limits: ImageLimits
    /// Largest original copied into the spool from a remote store (the upload limit).
    let maxOriginalBytes: Int64

    /// A processor reading and writing `store`; `spool` defaults to `store` when that is local.
    public init(
        pool: PostgresPool, store: any BlobStore, spool: LocalBlobStore? = nil, spec: DerivativeSpec,
        limits: ImageLimits,
        maxOriginalBytes: Int64 = 1 << 36
    ) {
        self.pool = pool
        self.store = store
        self.spool = spool ?? (store as! LocalBlobStore)
        self.spec = spec
        self.limits = limits
        self.maxOriginalBytes = maxOriginalBytes
    }

    /// Timings of one run, for metrics.
    public struct Outcome: Sendable {
        /// Milliseconds per pipeline stage.
        public var timings: [(stage: String, milliseconds: Double)]
        /// Whether the photo no longer exists (deleted meanwhile), so there was nothing to do.
        public var photoGone: Bool
    }

    /// Processes the claimed job's photo and, in one transaction, records the derivatives,
    /// marks the photo ready and completes the job.
    public func process(_ claim: JobQueue.Claim, queue: JobQueue, worker: String) throws -> Outcome {
        let photos = PhotoRepository(pool: pool)
        guard let original = try photos.originalKey(of: claim.photoId) else {
            // The photo was deleted: the job row went with it (cascade); nothing to do.
            return Outcome(timings: [], photoGone: true)
        }
        let originalKey = try BlobKey(original)
        // A remote original is copied into a bounded temporary file for the decoder, removed afterwards.
        let processed = try store.withLocalFile(
            originalKey, spoolDirectory: spool.spoolDirectory, maxBytes: maxOriginalBytes
        ) { path in
            try photos.markProcessing(claim.photoId)
            return try ImagePipeline.process(fileAt: path, spec: spec, limits: limits)
        }
        guard let image = processed else { throw ProcessingError.originalMissing(originalKey.rawValue) }
        let thumbnailKey = try BlobKey.thumbnail(objectId: claim.photoId)
        let previewKey = try BlobKey.preview(objectId: claim.photoId)
        try store.put(thumbnailKey, bytes: image.thumbnail.jpeg)
        try store.put(previewKey, bytes: image.preview.jpeg)
        let recorded = try pool.transaction { connection -> Bool in
            let updated = try photos.recordDerivatives(
                claim.photoId, image: image, thumbnailKey: thumbnailKey, previewKey: previewKey, on: connection)
            // Purged while it was processed: its job went with it (cascade).
            guard updated else { return false }
            guard try queue.complete(claim, worker: worker, on: connection) else {
                throw ProcessingError.leaseLost(claim.id)
            }
            return true
        }
        guard recorded else {
            // The purge deleted the row (and whatever derivative keys it held) before these files
            // existed: nothing else will ever remove them, and the bucket would serve them.
            _ = try? store.delete(thumbnailKey)
            _ = try? store.delete(previewKey)
            return Outcome(timings: image.timings, photoGone: true)
        }
        // Re-processed pixels: the display sizes made from the old ones go (rendered again on request).
        try SizeCache.remove(photoId: claim.photoId, repository: SizeRepository(pool: pool), store: store)
        return Outcome(timings: image.timings, photoGone: false)
    }
}

/// Why a job failed outside the image pipeline.
public enum ProcessingError: Error, CustomStringConvertible {
    /// The original's blob is not in the store.
    case originalMissing(String)
    /// Another worker took the job after this one's lease expired; its result was discarded.
    case leaseLost(Int64)

    public var description: String {
        switch self {
        case .originalMissing(let key): return "original \(key) is missing from the blob store"
        case .leaseLost(let id): return "lease on job \(id) expired before it finished"
        }
    }
}
