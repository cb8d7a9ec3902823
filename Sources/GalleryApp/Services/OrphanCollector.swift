import BlobStore
import Foundation
import Logging

/// Removes what no row refers to any more: uploads (`POST /files`) never attached to a photo
/// within the grace period, originals no `files` row names past it (a process killed between
/// storing an upload's blob and committing its row), and thumbnails and previews whose photo row is
/// gone (a photo purged while its job ran, a crash between a purge's commit and its unlinks). The worker runs it with
/// the trash purge; `galleryd` operators see the counts in `/metrics`.
public struct OrphanCollector: Sendable {
    /// What one pass removed.
    public struct Collected: Sendable, Equatable {
        /// Unattached uploads removed (`files` row and original, or an original with no row).
        public var uploads = 0
        /// Derivative files removed (thumbnails and previews of vanished photos).
        public var derivatives = 0
        /// Multipart uploads to the bucket aborted (a process killed while it sent a large file).
        public var multipartUploads = 0
    }

    let trash: TrashService
    var store: any BlobStore { trash.store }
    private var files: FileRepository { FileRepository(pool: trash.pool) }
    private var photos: PhotoRepository { PhotoRepository(pool: trash.pool) }

    /// The store directories holding one `<objectId>.jpg` per photo.
    static let derivativeDirectories = ["thumbnails", "previews"]
    /// Object ids checked per query.
    static let batchSize = 500

    /// The file names directly under `directory` of the store, with their modification times.
    func listing(_ directory: String) throws -> [(String, Date)] {
        if let s3 = store as? S3BlobStore {
            return try s3.list(prefix: directory + "/").compactMap { entry in
                let name = String(entry.key.dropFirst(directory.count + 1))
                return name.contains("/") ? nil : (name, entry.modified)
            }
        }
        guard let root = (store as? LocalBlobStore)?.root else { return [] }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: root + "/" + directory)) ?? []
        return names.compactMap { name in
            let attributes = try? FileManager.default.attributesOfItem(atPath: root + "/" + directory + "/" + name)
            return (attributes?[.modificationDate] as? Date).map { (name, $0) }
        }
    }

    public init(trash: TrashService) {
        self.trash = trash
    }

    /// One pass: uploads unattached for more than `graceHours` hours, derivatives older than
    /// `derivativeMinAge` seconds whose photo row does not exist, and, on S3, the multipart uploads
    /// started more than `graceHours` hours ago that were never completed nor aborted (a process
    /// killed mid-upload). The age keeps a file a worker is writing this moment out of reach (the
    /// worker itself removes what it wrote for a row that vanished meanwhile).
    public func collect(graceHours: Int, derivativeMinAge: TimeInterval = 600) throws -> Collected {
        var collected = Collected()
        for checksum in try files.unattachedChecksums(olderThanHours: graceHours) {
            // Checked again under the row's lock: a photo created from it meanwhile keeps it.
            if try trash.releaseFile(checksum: checksum, pendingOlderThanHours: graceHours) {
                collected.uploads += 1
            }
        }
        collected.uploads += try collectUnrecordedOriginals(graceHours: graceHours)
        if let s3 = store as? S3BlobStore {
            collected.multipartUploads = abortMultipartUploads(s3, graceHours: graceHours)
        }
        let cutoff = Date().addingTimeInterval(-derivativeMinAge)
        // Derivatives without a photo are found by listing the store: the local directories, or the
        // bucket's keys under each prefix (ListObjectsV2).
        for directory in Self.derivativeDirectories {
            var owners: [String: String] = [:]
            for (name, modified) in try listing(directory) where name.hasSuffix(".jpg") && modified < cutoff {
                owners[String(name.dropLast(4))] = directory + "/" + name
            }
            let ids = owners.keys.sorted()
            for start in stride(from: 0, to: ids.count, by: Self.batchSize) {
                let batch = Array(ids[start..<min(start + Self.batchSize, ids.count)])
                let existing = try photos.existingIds(among: batch)
                for id in batch where !existing.contains(id) {
                    if let key = try? BlobKey(owners[id]!), (try? store.delete(key)) == true {
                        collected.derivatives += 1
                    }
                }
            }
        }
        if collected != Collected() {
            trash.logger.notice(
                "collected orphans",
                metadata: [
                    "uploads": "\(collected.uploads)", "derivatives": "\(collected.derivatives)",
                    "multipartUploads": "\(collected.multipartUploads)", "graceHours": "\(graceHours)",
                ])
        }
        return collected
    }

    /// The pass over the bucket's open multipart uploads (`S3BlobStore.abortMultipartUploads`, at most
    /// `multipartCleanupBound` listed): a pass stopped by its bound or by a failed request is logged,
    /// and the next pass goes on from there; the rest of the collector's pass goes on either way.
    func abortMultipartUploads(_ s3: S3BlobStore, graceHours: Int, bound: Int = S3BlobStore.multipartCleanupBound)
        -> Int
    {
        let cleanup = s3.abortMultipartUploads(
            startedBefore: Date().addingTimeInterval(-Double(graceHours) * 3600),
            directories: ["originals"] + Self.derivativeDirectories, bound: bound)
        var metadata: Logger.Metadata = [
            "aborted": "\(cleanup.aborted)", "listed": "\(cleanup.listed)", "pages": "\(cleanup.pages)",
            "bound": "\(bound)",
        ]
        if let after = cleanup.resumedAfter { metadata["resumedAfterKey"] = "\(after.key)" }
        switch cleanup.stopped {
        case nil:
            break
        case .bound?:
            trash.logger.notice(
                "multipart clean-up listed its bound of open uploads this pass; the next pass goes on after them",
                metadata: metadata)
        case .failed(let error)?:
            metadata["error"] = "\(error)"
            trash.logger.warning(
                "multipart clean-up stopped: a request failed; the next pass goes on from there", metadata: metadata)
        }
        return cleanup.aborted
    }
}
