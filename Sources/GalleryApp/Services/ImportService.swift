import Crypto
import Foundation
import Imaging
import Postgres
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Bulk import of photos (JPEG, PNG, WebP, HEIC/HEIF, AVIF) from folders through the same
/// `UploadService` the HTTP routes use (no HTTP in between), each recognised by its bytes. Source files are copied, never moved or changed.
public struct ImportService: Sendable {
    /// The result for one file.
    public enum Outcome: Sendable {
        /// A new photo was created.
        case imported(objectId: String)
        /// The same bytes were already a photo.
        case duplicate(objectId: String)
        /// The file could not be imported, with the reason.
        case failed(reason: String)
    }

    let uploads: UploadService
    let spoolDirectory: String
    /// The uploads' free-space rule (`min_free_bytes`), checked for each file before it is spooled:
    /// an import, like an upload, never eats the reserve the workers' derivatives and the database
    /// need (nil: no check).
    let admission: UploadAdmission?

    /// How long files are tried again while the database cannot be reached (a restart, a failover):
    /// an import has no client to retry it, so without this a restart of a second failed every file
    /// the walk reached meanwhile. Counted from the outage's first failure, for every file at once:
    /// once the database has been gone that long, the other files fail at once (the import ends
    /// instead of waiting that long for each).
    let databaseRetrySeconds: Double
    /// The current outage: when its first failure came (nil while the database answers), and the
    /// retries made so far (for tests).
    let outage = Outage()

    /// When the database stopped answering, shared by the import's threads.
    final class Outage: Sendable {
        private let state = Mutex<(started: Date?, retries: Int)>((nil, 0))

        /// Whether a file that just met the database unreachable should be tried again: yes until
        /// `limit` seconds after the outage's first failure (counted as a retry).
        func shouldRetry(within limit: Double) -> Bool {
            state.withLock { state in
                let now = Date()
                let started = state.started ?? now
                state.started = started
                guard now.timeIntervalSince(started) < limit else { return false }
                state.retries += 1
                return true
            }
        }

        /// The database answered: the outage, if any, is over.
        func end() { state.withLock { $0.started = nil } }

        var retries: Int { state.withLock { $0.retries } }
    }

    public init(
        uploads: UploadService, spoolDirectory: String, admission: UploadAdmission? = nil,
        databaseRetrySeconds: Double = 60
    ) {
        self.uploads = uploads
        self.spoolDirectory = spoolDirectory
        self.admission = admission
        self.databaseRetrySeconds = databaseRetrySeconds
    }

    /// The image files under the given files and folders, sorted, skipping hidden entries: those
    /// named `.jpg`, `.jpeg`, `.png`, `.webp`, `.heic`, `.heif` or `.avif` (any case; a broken one is
    /// then reported as failed), and any other regular file whose first bytes are one of those
    /// formats (a camera's `.HIF` HEIF, a file without extension), since the upload goes by the
    /// bytes. Missing paths are reported as errors by the caller.
    public static func findImages(in paths: [String]) -> (files: [String], missing: [String]) {
        var files: [String] = []
        var missing: [String] = []
        let fm = FileManager.default
        for path in paths {
            var isDirectory: ObjCBool = false
            guard fm.fileExists(atPath: path, isDirectory: &isDirectory) else {
                missing.append(path)
                continue
            }
            if !isDirectory.boolValue {
                files.append(path)
                continue
            }
            guard let walker = fm.enumerator(atPath: path) else { continue }
            while let relative = walker.nextObject() as? String {
                let name = (relative as NSString).lastPathComponent
                if name.hasPrefix(".") {
                    walker.skipDescendants()
                    continue
                }
                let full = (path as NSString).appendingPathComponent(relative)
                if Self.imageExtensions.contains((name as NSString).pathExtension.lowercased())
                    || Self.startsAsAnImage(full)
                {
                    files.append(full)
                }
            }
        }
        return (files.sorted(), missing)
    }

    /// Extensions the folder walk picks up; the upload recognises the format by the bytes, so a
    /// mislabelled file is still stored as what it is.
    static let imageExtensions: Set<String> = ["jpg", "jpeg", "png", "webp", "heic", "heif", "avif"]

    /// Whether `path` is a regular file (not a folder, pipe or device, which reading could block
    /// on) whose first 64 bytes `ImageFormat.recognize` knows.
    static func startsAsAnImage(_ path: String) -> Bool {
        var status = stat()
        guard stat(path, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { return false }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var head = [UInt8](repeating: 0, count: 64)
        let count = head.withUnsafeMutableBytes { read(fd, $0.baseAddress, 64) }
        return count > 0 && ImageFormat.recognize(head[..<count]) != nil
    }

    /// Imports one file: copies it into the spool directory while hashing it, then stores it and
    /// creates its photo. Never throws: failures come back as `.failed` with a reason. A file that
    /// would leave less than `min_free_bytes` free (its spooled copy, then the original it becomes)
    /// is refused before anything is written. While the database cannot be reached the whole file
    /// is tried again (spooled anew: an attempt may have moved its copy into the store), for up to
    /// `databaseRetrySeconds` from the outage's first failure; storing and creating are idempotent, so an attempt whose commit
    /// happened but whose answer was lost only makes the next one find the file or the photo
    /// (then counted a duplicate).
    public func importFile(_ path: String) -> Outcome {
        var pause = 0.1
        while true {
            do {
                let outcome = try attemptImport(path)
                outage.end()
                return outcome
            } catch let error as PostgresError
                where Self.isUnavailable(error) && outage.shouldRetry(within: databaseRetrySeconds)
            {
                Thread.sleep(forTimeInterval: pause)
                pause = min(pause * 2, 2)
            } catch let error as GalleryError {
                return .failed(reason: error.message)
            } catch let error as ParseError {
                return .failed(reason: error.message)
            } catch let error as InsufficientStorage {
                return .failed(reason: error.message)
            } catch {
                return .failed(reason: "\(error)")
            }
        }
    }

    private func attemptImport(_ path: String) throws -> Outcome {
        let spooled = spoolDirectory + "/import-" + UUID().uuidString
        defer { unlink(spooled) }
        if let admission {
            var st = stat()
            try admission.checkFreeSpace(needing: stat(path, &st) == 0 ? Int(st.st_size) : 0)
        }
        let (digest, size) = try Self.copyHashing(from: path, to: spooled)
        let file = try uploads.storeFile(
            at: spooled, sha256: digest, byteSize: size, originalFilename: (path as NSString).lastPathComponent)
        let photo = try uploads.createPhoto(fileName: file.name, title: "", tags: [])
        return photo.isNew ? .imported(objectId: photo.objectId) : .duplicate(objectId: photo.objectId)
    }

    /// Whether `error` says the database cannot be reached now (refused or lost connections, a
    /// server shutting down or starting up), as opposed to a statement it refused.
    static func isUnavailable(_ error: PostgresError) -> Bool {
        switch error {
        case .connectFailed, .connectionClosed, .poolTimeout: return true
        case .server(let state, _, _, _):
            return state.errorClass == "08" || state == .adminShutdown || state == .crashShutdown
                || state == .cannotConnectNow
        default: return false
        }
    }

    /// Blocks until none of the photos is pending or processing (workers elsewhere — `serve` or
    /// `galleryd worker` — do the work); returns how many of them ended failed.
    public func waitForProcessing(_ objectIds: [String], pollInterval: TimeInterval = 0.2) throws -> Int {
        guard !objectIds.isEmpty else { return 0 }
        while true {
            guard let counts = try uploads.photos.processingCounts(objectIds) else { return 0 }
            if counts.waiting == 0 { return counts.failed }
            Thread.sleep(forTimeInterval: pollInterval)
        }
    }

    /// `galleryd import --process`: runs the queue's due jobs in this process (`WorkerPool.drain`) until
    /// none of `objectIds` is pending or processing; returns the jobs it ran and how many of the photos
    /// failed. A photo whose job is not due is waited for, polling every `pollInterval`: one another
    /// worker holds (a live one finishes it; one that died, an import or server killed mid-decode, loses
    /// it when its lease runs out, `job_lease_seconds`, and the next drain takes it on its next attempt)
    /// or one backing off after a failed attempt. `waiting` is told once how many photos it waits for.
    /// One drain alone ran only the jobs due at that moment, so an import run again after a kill exited
    /// with the killed job's photo still `processing` (decision 027, session 23).
    public func process(
        _ objectIds: [String], with workers: WorkerPool, pollInterval: TimeInterval = 0.5,
        waiting: (Int) -> Void = { _ in }
    ) throws -> (ran: Int, failed: Int) {
        var ran = 0
        var told = false
        while true {
            ran += workers.drain()
            let counts = try uploads.photos.processingCounts(objectIds) ?? (waiting: 0, failed: 0)
            if counts.waiting == 0 { return (ran, counts.failed) }
            if !told {
                waiting(counts.waiting)
                told = true
            }
            Thread.sleep(forTimeInterval: pollInterval)
        }
    }

    static func copyHashing(from source: String, to destination: String) throws -> (String, Int) {
        let input = open(source, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { throw ImportError.unreadable(source, String(cString: strerror(errno))) }
        defer { close(input) }
        let output = open(destination, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard output >= 0 else { throw ImportError.unreadable(destination, String(cString: strerror(errno))) }
        defer { close(output) }
        var hasher = SHA256()
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var total = 0
        while true {
            let n = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw ImportError.unreadable(source, String(cString: strerror(errno)))
            }
            if n == 0 { break }
            try buffer.withUnsafeBytes { raw in
                let chunk = UnsafeRawBufferPointer(rebasing: raw[0..<n])
                hasher.update(bufferPointer: chunk)
                var offset = 0
                while offset < n {
                    let w = write(output, chunk.baseAddress! + offset, n - offset)
                    if w < 0 {
                        if errno == EINTR { continue }
                        throw ImportError.unreadable(destination, String(cString: strerror(errno)))
                    }
                    offset += w
                }
            }
            total += n
        }
        return (SHA256BodyObserver.hex(hasher.finalize()), total)
    }
}

/// Why an import could not read or spool a file.
public enum ImportError: Error, CustomStringConvertible {
    /// The path could not be read or written, with `strerror`.
    case unreadable(String, String)

    public var description: String {
        switch self {
        case .unreadable(let path, let reason): return "\(path): \(reason)"
        }
    }
}
