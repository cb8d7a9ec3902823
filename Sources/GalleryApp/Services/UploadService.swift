import BlobStore
import Foundation
import Imaging
import Logging
import Postgres

/// Turns uploaded bytes into photos: probes the image header (JPEG, PNG, WebP, HEIC, AVIF), stores the original under its
/// content address, records it, and creates the photo row with its processing job in one
/// transaction. Used by the HTTP upload routes and by `galleryd import` alike.
public final class UploadService: Sendable {
    /// An uploaded file as recorded in the `files` table.
    public struct StoredFile: Sendable {
        /// The Parse file name (`<sha256>.jpg`, `.png`, `.webp`, `.heic` or `.avif`).
        public var name: String
        /// The blob key of the original.
        public var key: BlobKey
        /// SHA-256 of the bytes, hex.
        public var checksum: String
    }

    /// The photo a create call produced or found.
    public struct PhotoReference: Sendable {
        /// The photo's objectId.
        public var objectId: String
        /// When it was created.
        public var createdAt: Date
        /// False when the same bytes were already a photo and that photo was returned.
        public var isNew: Bool
    }

    let pool: PostgresPool
    let store: any BlobStore
    let limits: ImageLimits
    let logger: Logger
    /// The `files` statements.
    var files: FileRepository { FileRepository(pool: pool) }
    /// The `photos` statements.
    var photos: PhotoRepository { PhotoRepository(pool: pool) }
    /// The channel workers LISTEN on (owned by `JobQueue`; kept here for existing callers).
    public static var jobChannel: String { JobQueue.channel }

    public init(pool: PostgresPool, store: any BlobStore, limits: ImageLimits, logger: Logger) {
        self.pool = pool
        self.store = store
        self.limits = limits
        self.logger = logger
    }

    /// Probes the file at `path` (an upload's temporary file, which this call moves into the store
    /// or leaves for the caller to delete), stores it under `originals/<sha256>.<ext>` (the
    /// extension of the format its bytes are: jpg, png, webp, heic, avif) and records it,
    /// with `uploader`'s upload of it (nil: the master key) under `originalFilename`. The same bytes
    /// stored twice, by anyone, give the same file (one blob); each uploader's upload is their own.
    /// On any failure nothing is left behind.
    public func storeFile(
        at path: String, sha256: String, byteSize: Int, originalFilename: String, uploader: String? = nil
    ) throws -> StoredFile {
        guard byteSize > 0 else { throw GalleryError.unstorableImage("The file is empty.") }
        let info: ImageInfo
        do {
            info = try ImageProbe.probe(fileAt: path, limits: limits)
        } catch let error as ImageError {
            throw GalleryError.unstorableImage(Self.describe(error))
        }
        // A body cut off in transit still probes (the header is whole): refuse it now rather than
        // store it and fail it later. Bytes after the end-of-image marker are allowed.
        guard try ImageProbe.isComplete(fileAt: path, format: info.format) else {
            throw GalleryError.unstorableImage(
                info.format == .jpeg
                    ? "The image is truncated: it ends before the JPEG end-of-image marker."
                    : "The image is truncated: its \(info.format.rawValue.uppercased()) data ends early.")
        }
        let key = try BlobKey.original(sha256: sha256, extension: info.format.fileExtension)
        let name = key.lastComponent
        var storedNewBlob = false
        do {
            // The files row is locked while the upload is recorded and the blob checked (or
            // written), the lock a purge takes before it releases the file (TrashService.releaseFile):
            // either the purge ran first and this finds no blob and writes it again, or it waits and
            // then finds the upload pending. A row a purge deleted between the insert and the lock is
            // inserted again (bounded).
            var attempt = 0
            while true {
                attempt += 1
                let locked = try pool.transaction { connection -> Bool in
                    // Any conflict, not only on checksum: the name derives from it, and a concurrent upload
                    // of the same bytes can trip the name key first, which `on conflict (checksum)` would raise.
                    try files.insert(
                        name: name, key: key.rawValue, checksum: sha256, byteSize: byteSize, info: info, on: connection)
                    guard
                        try files.recordUpload(
                            name: name, uploader: uploader, originalFilename: Self.cleanFilename(originalFilename),
                            on: connection)
                    else { return false }
                    if try store.info(key)?.size != Int64(byteSize) {
                        try store.put(key, movingFileAt: path, sha256: sha256)
                        storedNewBlob = true
                    }
                    return true
                }
                if locked { break }
                guard attempt < 3 else {
                    throw GalleryError.conflict("the file was deleted while it was stored; try again")
                }
            }
        } catch {
            // Leave no file behind unless another upload of the same bytes has recorded it meanwhile.
            if storedNewBlob, (try? files.exists(checksum: sha256)) == false {
                _ = try? store.delete(key)
            }
            throw error
        }
        return StoredFile(name: name, key: key, checksum: sha256)
    }

    /// Creates `owner`'s photo (nil: ownerless) of an uploaded file, with its processing job, in one
    /// transaction, and wakes the workers. The file must be one the owner uploaded (their pending
    /// upload, which this consumes and whose name the photo takes) or the bytes of a photo they
    /// own already; with `anyFile` (the master key) any stored file. Someone else's file and no
    /// file get the same error. The same bytes already the owner's photo give back that photo
    /// (restored from the trash if it was there) instead of a copy; another user's photo of the
    /// same bytes is theirs, and this owner gets a photo of their own sharing the stored original.
    public func createPhoto(
        fileName: String, title: String, tags: [String], owner: String? = nil, anyFile: Bool = false
    ) throws -> PhotoReference {
        let reference = try pool.transaction { connection -> PhotoReference in
            // The file's row is locked, the lock a purge takes before releasing the file, so the
            // bytes cannot be released under this photo.
            // Someone else's file and no file make the same statements (on the checksum the name
            // gives when there is no row) and get the same error, so neither answer nor timing tells
            // whether anyone stored those bytes.
            let locked = try files.lock(name: fileName, on: connection)
            let checksum = locked?.checksum ?? String(fileName.prefix(64))
            let uploadedAs = try files.consumeUpload(checksum: checksum, uploader: owner, on: connection)
            let owns =
                uploadedAs == nil && !anyFile
                ? try photos.exists(checksum: checksum, owner: owner, on: connection) : false
            guard var file = locked, uploadedAs != nil || anyFile || owns else {
                throw GalleryError.unknownFile("original must name a file uploaded with POST /files/<name>.")
            }
            if let uploadedAs { file.originalFilename = uploadedAs }
            if let existing = try restorePhoto(checksum: file.checksum, owner: owner, on: connection) {
                return existing
            }
            // `on conflict do nothing`: a concurrent create of the same bytes (a client retrying) waits
            // for the other insert and then finds that photo below, instead of failing with 137.
            guard
                let inserted = try photos.insertPending(
                    objectId: ParseObjectID.generate(), title: title, tags: tags, file: file, owner: owner,
                    on: connection)
            else {
                // A concurrent create of the same bytes committed first (the insert waited for it):
                // read committed lets this statement see it, so give that photo back.
                if let existing = try restorePhoto(checksum: file.checksum, owner: owner, on: connection) {
                    return existing
                }
                throw GalleryError.conflict("photo insert returned nothing")
            }
            try JobQueue.enqueue(inserted.objectId, on: connection)
            return PhotoReference(objectId: inserted.objectId, createdAt: inserted.createdAt, isNew: true)
        }
        logger.info(
            "photo \(reference.isNew ? "created" : "already present")", metadata: ["objectId": "\(reference.objectId)"])
        return reference
    }

    /// The photo already made from these bytes, taken out of the trash if it was there, and put
    /// back in the processing queue if it had failed (uploading the bytes again is how a user
    /// retries); nil when none.
    private func restorePhoto(checksum: String, owner: String?, on connection: PostgresConnection) throws
        -> PhotoReference?
    {
        guard let restored = try photos.restore(checksum: checksum, owner: owner, on: connection) else { return nil }
        if restored.wasFailed {
            try JobQueue.requeue([restored.objectId], on: connection)
        }
        return PhotoReference(objectId: restored.objectId, createdAt: restored.createdAt, isNew: false)
    }

    /// A file name safe to keep as metadata: the last path component, control characters removed, at most 255 bytes.
    static func cleanFilename(_ name: String) -> String {
        let last = name.split(separator: "/").last.map(String.init) ?? name
        var cleaned = String(
            String.UnicodeScalarView(last.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F }))
        while cleaned.utf8.count > 255 { cleaned.removeLast() }
        return cleaned.isEmpty ? "upload.jpg" : cleaned
    }

    /// A client-facing sentence for an image error.
    static func describe(_ error: ImageError) -> String {
        switch error {
        case .unsupportedFormat:
            return "Unsupported file format: only JPEG, PNG, WebP, HEIC and AVIF images are accepted."
        case .tooManyPixels(let width, let height, let limit):
            return "The image is \(width)x\(height) pixels, more than the limit of \(limit)."
        default: return "The image cannot be read: \(error)."
        }
    }
}
