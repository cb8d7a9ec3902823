import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A blob store in a local directory. Each write goes to a temporary file under `<root>/.tmp`
/// (same filesystem; each store has its own directory there, see `sweepTemporaryFiles`), is
/// fsynced, renamed over the key's path, and the directory is fsynced, so a key is never visible
/// half-written and an acknowledged write survives a power cut.
public final class LocalBlobStore: BlobStore, Sendable {
    /// The root directory (absolute, no trailing slash).
    public let root: String
    /// `<root>/.tmp`: every store's temporary files, each store's in a directory of its own.
    let temporaryRoot: String
    /// This store's directory under `temporaryRoot`, where it stages writes and spools uploads
    /// (see `LocalBlobStore+TemporaryFiles.swift`).
    let temporaryDirectory: String
    /// The lock on `temporaryDirectory`'s lock file, held while the store lives.
    private let temporaryLock: Int32
    /// The root directory, open: reads look keys up relative to it (`openat`), a shorter path walk
    /// than from `/` and no path string to build per read. Replaced when the root turns out to be
    /// another directory than the one opened (a volume mounted over it after start); the old
    /// descriptor is left open so a read racing the swap never uses a reused number.
    private let rootFD: Atomic<Int32>
    /// Bytes written through this store so far.
    private let written = Atomic<Int64>(0)
    /// Descriptors of recently read blobs; nil when `openFileCacheEntries` is 0.
    private let openFiles: BlobDescriptorCache?

    /// Opens (and creates when missing) a store rooted at `root`. `openFileCacheEntries` > 0 keeps
    /// that many recently read blobs open (nginx's `open_file_cache max=`); a process that writes
    /// or deletes blobs through this store sees its changes at once.
    public init(root: String, openFileCacheEntries: Int = 0) throws {
        openFiles = openFileCacheEntries > 0 ? BlobDescriptorCache(capacity: openFileCacheEntries) : nil
        let absolute = URL(fileURLWithPath: root).standardizedFileURL.path
        self.root = absolute.hasSuffix("/") && absolute.count > 1 ? String(absolute.dropLast()) : absolute
        self.temporaryRoot = self.root + "/.tmp"
        try Self.makeDirectory(self.root)
        try Self.makeDirectory(temporaryRoot)
        (temporaryDirectory, temporaryLock) = try Self.makeTemporaryDirectory(in: temporaryRoot)
        let fd = open(self.root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else {
            let error = Self.ioError("open", self.root)
            close(temporaryLock)
            throw error
        }
        rootFD = Atomic(fd)
    }

    /// Closes the root and releases the temporary directory's lock: what is left in it is then
    /// removed by the next sweep, as after a crash.
    deinit {
        close(rootFD.load(ordering: .relaxed))
        close(temporaryLock)
    }

    /// The directory where uploads should be spooled so that `put(_:movingFileAt:)` is a rename.
    public var spoolDirectory: String { temporaryDirectory }

    public var bytesWritten: Int64 { written.load(ordering: .relaxed) }

    /// Reads answered from the open-file cache so far.
    public var openFileCacheHits: Int { openFiles?.hits ?? 0 }

    /// Descriptors the open-file cache holds now.
    public var openFileCacheCount: Int { openFiles?.count ?? 0 }

    /// The file path of a key inside the root.
    public func path(for key: BlobKey) -> String { root + "/" + key.rawValue }

    @discardableResult
    public func put(_ key: BlobKey, movingFileAt source: String) throws -> BlobInfo {
        let destination = path(for: key)
        try Self.makeDirectory((destination as NSString).deletingLastPathComponent)
        let staged = temporaryDirectory + "/" + UUID().uuidString
        // Link or copy into the temp dir first so the final step is always a same-directory-tree rename.
        if rename(source, staged) != 0 {
            guard errno == EXDEV else { throw Self.ioError("rename", source) }
            try copyFile(from: source, to: staged)
            unlink(source)
        }
        do {
            try Self.fsyncFile(staged)
            guard rename(staged, destination) == 0 else { throw Self.ioError("rename", destination) }
            openFiles?.invalidate(key.rawValue)
        } catch {
            unlink(staged)
            throw error
        }
        try Self.fsyncDirectory((destination as NSString).deletingLastPathComponent)
        let info = try fileInfo(destination) ?? BlobInfo(size: 0, modified: Date(), etag: "\"0\"")
        count(info.size)
        return info
    }

    @discardableResult
    public func put(_ key: BlobKey, bytes: [UInt8]) throws -> BlobInfo {
        let staged = try writeTemporaryFile(bytes)
        do {
            return try put(key, movingFileAt: staged)  // fsyncs it before the rename
        } catch {
            unlink(staged)
            throw error
        }
    }

    /// Writes `bytes` to a new file in this store's temporary directory and returns its path, for
    /// `put(_:movingFileAt:)` (a rename) or for the caller to remove. A full disk throws
    /// `insufficientStorage`, as every write of the store does.
    public func writeTemporaryFile(_ bytes: [UInt8]) throws -> String {
        let path = temporaryDirectory + "/" + UUID().uuidString
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw Self.ioError("open", path) }
        defer { close(fd) }
        do {
            try Self.writeAll(fd, bytes, path: path)
        } catch {
            unlink(path)
            throw error
        }
        return path
    }

    /// Writes all of `bytes` to `fd` (the file at `path`, named in errors), again after `EINTR`; a full
    /// disk throws `insufficientStorage`, as every write of the store does.
    public static func writeAll(_ fd: Int32, _ bytes: [UInt8], path: String) throws {
        try bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let n = write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    throw Self.ioError("write", path)
                }
                offset += n
            }
        }
    }

    public func info(_ key: BlobKey) throws -> BlobInfo? { try fileInfo(path(for: key)) }

    /// A blob opened for reading: its descriptor, which the caller now owns and must close, and its
    /// metadata from `fstat` on that same descriptor (so the size and validators describe the bytes
    /// that will be read, even if the key is replaced meanwhile).
    public struct OpenBlob: Sendable {
        public let fd: Int32
        public let info: BlobInfo
    }

    /// Opens a blob for reading (one lookup relative to the root, then `fstat`), or nil when absent.
    /// The caller owns `fd` (a duplicate of the cached one when the open-file cache has it).
    public func openForReading(_ key: BlobKey) throws -> OpenBlob? {
        guard openFiles != nil else { return try openUncached(key)?.blob }
        guard let file = try openShared(key) else { return nil }
        let copy = fcntl(file.fd, F_DUPFD_CLOEXEC, 0)
        guard copy >= 0 else { throw Self.ioError("dup", path(for: key)) }
        return OpenBlob(fd: copy, info: file.info)
    }

    /// The blob open for reading, shared with the open-file cache and other readers, or nil when
    /// absent: what the bucket route sends from. A cache hit makes no system call; without the
    /// cache, each call opens the file (and the last reader's release closes it).
    public func openShared(_ key: BlobKey) throws -> BlobFile? {
        guard let openFiles else { return try openUncached(key).map { BlobFile(fd: $0.blob.fd, info: $0.blob.info) } }
        if let hit = openFiles.lookup(key.rawValue) { return hit }
        let generation = openFiles.currentGeneration
        guard let opened = try openUncached(key) else { return nil }
        let file = BlobFile(fd: opened.blob.fd, info: opened.blob.info)
        openFiles.insert(key.rawValue, file: file, inode: opened.status.st_ino, generation: generation)
        return file
    }

    /// As `openShared(_:)` for key text not validated yet: the key and the blob, or nil when absent.
    /// A key the open-file cache holds was validated when it went in, so a hit skips the validation
    /// (a byte switch per character of every bucket GET); anything else is validated first and
    /// refused as `BlobKey(_:)` refuses it.
    public func openShared(validating text: String) throws -> (key: BlobKey, file: BlobFile)? {
        if let hit = openFiles?.lookup(text) { return (BlobKey(validated: text), hit) }
        let key = try BlobKey(text)
        return try openShared(key).map { (key, $0) }
    }

    /// As `openShared(validating:)` for a key given with its hash, possibly as bytes borrowed from a
    /// request path (`HashedKey.probe`): a hit of the open-file cache answers with the key's text as
    /// the cache holds it, so the signed bucket GET makes no String of its key (decision 041, round 9).
    public func openShared(validating key: HashedKey) throws -> (key: BlobKey, file: BlobFile)? {
        if let hit = openFiles?.lookup(key) { return (BlobKey(validated: hit.text), hit.file) }
        return try openShared(validating: key.string)
    }

    /// One lookup relative to the root and an `fstat`: the blob and its raw status, or nil when absent.
    private func openUncached(_ key: BlobKey) throws -> (blob: OpenBlob, status: FileStatus)? {
        // O_NONBLOCK: opening something that is not a regular file (a FIFO) must not hang the caller.
        // A validated key is relative, without `..`, so the lookup stays under the root.
        // (O_NONBLOCK stays set for sendfile; Linux ignores it for regular files.)
        var fd = openat(key, in: rootFD.load(ordering: .acquiring))
        var failure = errno
        if fd < 0 && failure == ENOENT, let reopened = reopenRootIfReplaced() {
            fd = openat(key, in: reopened)
            failure = errno
        }
        guard fd >= 0 else {
            if failure == ENOENT || failure == ENOTDIR { return nil }
            errno = failure
            throw Self.ioError("open", path(for: key))
        }
        var st = FileStatus()
        guard fstat(fd, &st) == 0 else {
            let error = Self.ioError("fstat", path(for: key))
            close(fd)
            throw error
        }
        guard (st.st_mode & S_IFMT) == S_IFREG else {
            close(fd)
            return nil
        }
        return (OpenBlob(fd: fd, info: Self.info(st)), st)
    }

    public func localPath(_ key: BlobKey) throws -> String? {
        let p = path(for: key)
        return access(p, F_OK) == 0 ? p : nil
    }

    private func openat(_ key: BlobKey, in directory: Int32) -> Int32 {
        key.rawValue.withCString { FileSystemCalls.openAt(directory, $0, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY) }
    }

    /// After a miss: when `root` now names another directory than the open one (storage mounted
    /// after start), opens the new one and returns its descriptor; nil when it is the same.
    /// Misses pay one stat of the root; hits pay nothing.
    private func reopenRootIfReplaced() -> Int32? {
        let current = rootFD.load(ordering: .acquiring)
        var opened = FileStatus()
        var named = FileStatus()
        guard fstat(current, &opened) == 0, stat(root, &named) == 0,
            opened.st_dev != named.st_dev || opened.st_ino != named.st_ino
        else { return nil }
        let fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        let (exchanged, original) = rootFD.compareExchange(
            expected: current, desired: fd, ordering: .acquiringAndReleasing)
        if !exchanged {
            close(fd)  // another thread reopened it first
            return original
        }
        return fd
    }

    @discardableResult
    public func delete(_ key: BlobKey) throws -> Bool {
        let p = path(for: key)
        if unlink(p) != 0 {
            if errno == ENOENT {
                openFiles?.invalidate(key.rawValue)
                return false
            }
            throw Self.ioError("unlink", p)
        }
        // After the unlink: a reader that opened the file before it cannot cache it any more.
        openFiles?.invalidate(key.rawValue)
        try Self.fsyncDirectory((p as NSString).deletingLastPathComponent)
        return true
    }

    /// Bytes an unprivileged writer can still use on the store's file system (`statvfs`'s
    /// `f_bavail`), or nil when it cannot be found out.
    public func availableBytes() -> Int64? {
        var st = statvfs()
        guard statvfs(root, &st) == 0 else { return nil }
        return Int64(st.f_bavail) * Int64(st.f_frsize)
    }

    private func count(_ bytes: Int64) {
        written.add(bytes, ordering: .relaxed)
    }

    private func fileInfo(_ path: String) throws -> BlobInfo? {
        var st = FileStatus()
        guard stat(path, &st) == 0 else {
            if errno == ENOENT || errno == ENOTDIR { return nil }
            throw Self.ioError("stat", path)
        }
        guard (st.st_mode & S_IFMT) == S_IFREG else { return nil }
        return Self.info(st)
    }

    /// Size, modification time and the strong ETag `"<mtime in ns, hex>-<size, hex>"` (as nginx
    /// builds its own from mtime and size), written into one string: this runs for every GET.
    private static func info(_ st: FileStatus) -> BlobInfo {
        let seconds = Int64(st.modificationTime.tv_sec)
        let nanos = Int64(st.modificationTime.tv_nsec)
        let modified = Date(timeIntervalSince1970: Double(seconds) + Double(nanos) / 1e9)
        let stamp = UInt64(bitPattern: seconds &* 1_000_000_000 &+ nanos)
        let size = UInt64(max(0, Int64(st.st_size)))
        func hexDigits(_ v: UInt64) -> Int { v == 0 ? 1 : (64 - v.leadingZeroBitCount + 3) / 4 }
        let length = hexDigits(stamp) + hexDigits(size) + 3
        let etag = String(unsafeUninitializedCapacity: length) { out in
            func put(_ v: UInt64, endingAt end: Int) {
                var v = v
                var i = end
                repeat {
                    i -= 1
                    let digit = UInt8(truncatingIfNeeded: v & 0xF)
                    out[i] = digit < 10 ? 0x30 + digit : 0x57 + digit
                    v >>= 4
                } while v != 0
            }
            out[0] = UInt8(ascii: "\"")
            put(stamp, endingAt: 1 + hexDigits(stamp))
            out[1 + hexDigits(stamp)] = UInt8(ascii: "-")
            put(size, endingAt: length - 1)
            out[length - 1] = UInt8(ascii: "\"")
            return length
        }
        return BlobInfo(size: Int64(st.st_size), modified: modified, etag: etag)
    }

    private func copyFile(from source: String, to destination: String) throws {
        let input = open(source, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { throw Self.ioError("open", source) }
        defer { close(input) }
        let output = open(destination, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard output >= 0 else { throw Self.ioError("open", destination) }
        defer { close(output) }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw Self.ioError("read", source)
            }
            if n == 0 { break }
            var offset = 0
            while offset < n {
                let w = buffer.withUnsafeBytes { write(output, $0.baseAddress! + offset, n - offset) }
                if w < 0 {
                    if errno == EINTR { continue }
                    throw Self.ioError("write", destination)
                }
                offset += w
            }
        }
    }

    static func makeDirectory(_ path: String) throws {
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        } catch {
            throw BlobStoreError.io(operation: "mkdir", path: path, message: error.localizedDescription)
        }
    }

    private static func fsyncFile(_ path: String) throws {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw ioError("open", path) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw ioError("fsync", path) }
    }

    private static func fsyncDirectory(_ path: String) throws {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw ioError("open", path) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw ioError("fsync", path) }
    }

    static func ioError(_ operation: String, _ path: String) -> BlobStoreError {
        if errno == ENOSPC || errno == EDQUOT { return .insufficientStorage(operation: operation, path: path) }
        return .io(operation: operation, path: path, message: String(cString: strerror(errno)))
    }
}
