import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Temporary files: where each store writes them, and the one sweep that removes what was abandoned.
///
/// Every store (in practice every process: `serve`, `worker`, `import`) stages its writes and spools
/// its uploads in a directory of its own, `<root>/.tmp/<host>-<pid>-<random>`, and holds an exclusive
/// `flock` on `<root>/.tmp/<same name>.lock` for as long as it lives. The kernel releases that lock
/// when the process ends in any way (`kill -9` included), so another process can tell, without
/// `/proc` and across containers or machines sharing the directory, that nobody will ever rename
/// those files: the sweep removes such a directory whole, however fresh its files. In directories
/// whose owner lives (and for loose files in `.tmp`), only files nobody has written to for the
/// sweep's age go: a crash mid-write of that process cannot be told apart from a slow writer.
/// Where `flock` does not work (a network file system without locking) every owner counts as
/// alive, and only the age rule applies.
extension LocalBlobStore {
    /// Removes abandoned temporary files: everything a store whose process is gone left behind, and
    /// any other temporary file not written to for `age` seconds (a client that vanished
    /// mid-upload). Start-up runs it, and the worker every few minutes, with `tmp_sweep_minutes`.
    /// Returns how many files were removed.
    @discardableResult
    public func sweepTemporaryFiles(olderThan age: TimeInterval) -> Int {
        let manager = FileManager.default
        guard let names = try? manager.contentsOfDirectory(atPath: temporaryRoot) else { return 0 }
        var removed = 0
        let own = (temporaryDirectory as NSString).lastPathComponent + Self.lockSuffix
        for name in names where Self.isLockFile(name) && name != own {
            let lockPath = temporaryRoot + "/" + name
            let fd = open(lockPath, O_RDWR | O_CLOEXEC)
            guard fd >= 0 else { continue }
            defer { close(fd) }
            // Taken: its owner is gone. Refused (or locks unsupported): it lives, or might.
            guard flock(fd, LOCK_EX | LOCK_NB) == 0 else { continue }
            let directory = temporaryRoot + "/" + name.dropLast(Self.lockSuffix.count)
            for file in (try? manager.contentsOfDirectory(atPath: directory)) ?? []
            where unlink(directory + "/" + file) == 0 {
                removed += 1
            }
            rmdir(directory)
            unlink(lockPath)
        }
        let cutoff = Date().addingTimeInterval(-age)
        for name in (try? manager.contentsOfDirectory(atPath: temporaryRoot)) ?? [] where !Self.isLockFile(name) {
            let path = temporaryRoot + "/" + name
            var isDirectory: ObjCBool = false
            guard manager.fileExists(atPath: path, isDirectory: &isDirectory) else { continue }
            let files =
                isDirectory.boolValue
                ? ((try? manager.contentsOfDirectory(atPath: path)) ?? []).map { path + "/" + $0 } : [path]
            for file in files where Self.isOlder(file, than: cutoff) && unlink(file) == 0 {
                removed += 1
            }
        }
        return removed
    }

    /// The name ending of the lock file beside each store's temporary directory.
    static let lockSuffix = ".lock"

    /// Whether `name` in `.tmp` is a store's lock file (a hidden one is still being set up, or was
    /// left by a crash in the middle of that, and is swept by age).
    private static func isLockFile(_ name: String) -> Bool { name.hasSuffix(lockSuffix) && !name.hasPrefix(".") }

    /// Makes this store's temporary directory under `parent` and its lock file, locked; returns the
    /// directory and the lock's descriptor (kept open, and so locked, for the store's life). The lock
    /// file is locked under a hidden name and then renamed, so a sweep never sees it unlocked.
    static func makeTemporaryDirectory(in parent: String) throws -> (directory: String, lock: Int32) {
        let name = "\(hostName())-\(getpid())-\(UUID().uuidString.prefix(8).lowercased())"
        let hidden = parent + "/." + name + lockSuffix
        let fd = open(hidden, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw ioError("open", hidden) }
        // A file system without locks: the directory is used all the same, swept by age only.
        _ = flock(fd, LOCK_EX | LOCK_NB)
        let directory = parent + "/" + name
        do {
            guard rename(hidden, directory + lockSuffix) == 0 else { throw ioError("rename", hidden) }
            try makeDirectory(directory)
        } catch {
            unlink(hidden)
            unlink(directory + lockSuffix)
            close(fd)
            throw error
        }
        return (directory, fd)
    }

    /// This machine's name, reduced to characters safe in a file name (for operators reading `.tmp`).
    private static func hostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "host" }
        let name = buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }.unicodeScalars.filter {
            ($0 >= "a" && $0 <= "z") || ($0 >= "A" && $0 <= "Z") || ($0 >= "0" && $0 <= "9") || $0 == "-" || $0 == "."
        }
        return name.isEmpty ? "host" : String(String.UnicodeScalarView(name.prefix(64)))
    }

    /// Whether the regular file at `path` was last modified before `cutoff`.
    private static func isOlder(_ path: String, than cutoff: Date) -> Bool {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
            attributes[.type] as? FileAttributeType == .typeRegular,
            let modified = attributes[.modificationDate] as? Date
        else { return false }
        return modified < cutoff
    }
}
