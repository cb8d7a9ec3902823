import BlobStore
import Crypto
import Foundation
import Postgres

/// `galleryd storage migrate --to s3|local`: copies every blob the database names (originals of
/// `files`, each photo's original, thumbnail and preview, and its rendered display sizes) from one store to the other, and
/// verifies each copy. Copy-only, so it is safe while serving: the source stays complete until
/// the operator switches `storage`. Resumable: a blob already at the destination with the same
/// size (and, for S3, the MD5 ETag of its bytes) is skipped, so a run cut off anywhere just runs again.
public struct StorageMigration {
    /// What one run did.
    public struct Report: Sendable, Equatable {
        /// Blobs the database names.
        public var total = 0
        /// Blobs copied and verified in this run.
        public var copied = 0
        /// Blobs already at the destination, verified, left alone.
        public var skipped = 0
        /// Blobs the database names but the source does not hold (logged, not fatal).
        public var missing = 0
        /// Blobs whose copy could not be verified, with the reason.
        public var failed: [String: String] = [:]
    }

    let pool: PostgresPool
    let source: any BlobStore
    let destination: any BlobStore
    /// Where temporary copies go (same file system as the local store).
    let spoolDirectory: String

    /// A migration between two stores, recorded in `pool`'s database.
    public init(pool: PostgresPool, source: any BlobStore, destination: any BlobStore, spoolDirectory: String) {
        self.pool = pool
        self.source = source
        self.destination = destination
        self.spoolDirectory = spoolDirectory
    }

    /// Every key the database refers to, sorted, without duplicates.
    public func keys() throws -> [BlobKey] {
        try BlobReferenceRepository(pool: pool).allKeys().map { try BlobKey($0) }
    }

    /// Copies what is not yet at the destination; `limit` stops after that many copies (tests use it
    /// to cut a run off midway). `progress` is called after each blob with (done, total).
    public func run(limit: Int = .max, progress: (Int, Int) -> Void = { _, _ in }) throws -> Report {
        let keys = try keys()
        var report = Report(total: keys.count)
        for (index, key) in keys.enumerated() {
            if report.copied >= limit { break }
            do {
                try migrate(key, into: &report)
            } catch {
                report.failed[key.rawValue] = "\(error)"
            }
            progress(index + 1, keys.count)
        }
        return report
    }

    private func migrate(_ key: BlobKey, into report: inout Report) throws {
        // A local copy of the source blob, and its SHA-256 and MD5.
        let copied: Bool? = try source.withLocalFile(key, spoolDirectory: spoolDirectory, maxBytes: .max) { path in
            let (sha256, md5, size) = try Self.digests(path)
            if key.rawValue.hasPrefix("originals/"), !key.lastComponent.hasPrefix(sha256 + ".") {
                throw BlobStoreError.io(
                    operation: "verify", path: key.rawValue, message: "source bytes do not match their SHA-256 name")
            }
            if let existing = try destination.info(key), existing.size == size,
                try verify(key, existing, sha256: sha256, md5: md5)
            {
                return false
            }
            // The store moves the file it is given: hand it a copy (the source may be a local store's own file).
            let staged = spoolDirectory + "/migrate-" + UUID().uuidString
            defer { unlink(staged) }
            try FileManager.default.copyItem(atPath: path, toPath: staged)
            let stored = try destination.put(key, movingFileAt: staged, sha256: sha256)
            guard stored.size == size, try verify(key, stored, sha256: sha256, md5: md5) else {
                throw BlobStoreError.io(
                    operation: "verify", path: key.rawValue, message: "the copy differs from the source")
            }
            return true
        }
        switch copied {
        case nil: report.missing += 1
        case true?: report.copied += 1
        case false?: report.skipped += 1
        }
    }

    /// Whether the destination's blob holds these bytes: the ETag is the MD5 for a single-part S3
    /// object; a multipart ETag (`…-N`) or a local store is checked by reading it back.
    private func verify(_ key: BlobKey, _ info: BlobInfo, sha256: String, md5: String) throws -> Bool {
        let etag = info.etag.trimmingCharacters(in: CharacterSet(charactersIn: "\""))
        if destination is S3BlobStore, !etag.contains("-") { return etag == md5 }
        let hash: String? = try destination.withLocalFile(key, spoolDirectory: spoolDirectory, maxBytes: .max) { path in
            try Self.digests(path).sha256
        }
        return hash == sha256
    }

    /// SHA-256 and MD5 (hex) and size of a file, read once in 1 MiB pieces.
    static func digests(_ path: String) throws -> (sha256: String, md5: String, size: Int64) {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw BlobStoreError.io(operation: "open", path: path, message: "cannot open for reading")
        }
        defer { try? handle.close() }
        var sha = SHA256()
        var md5 = Insecure.MD5()
        var size: Int64 = 0
        while true {
            let chunk = handle.readData(ofLength: 1 << 20)
            if chunk.isEmpty { break }
            sha.update(data: chunk)
            md5.update(data: chunk)
            size += Int64(chunk.count)
        }
        return (S3Signer.hex(sha.finalize()), S3Signer.hex(md5.finalize()), size)
    }
}
