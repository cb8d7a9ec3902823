#if os(Linux)
import Foundation
import Glibc

extension LocalBlobStore {
    /// At start, removes the temporary files (spooled upload bodies, blobs being written) a
    /// crashed or `kill -9`ed process left, instead of waiting for the age-based sweep: those no
    /// process holds open. Only when no other process of this program runs on the machine: another
    /// instance (`galleryd worker`, `import`) may have closed a file it is about to rename. Returns
    /// how many were removed, or nil (removing nothing) when another instance runs or `/proc`
    /// cannot be read.
    @discardableResult
    public func sweepAbandonedTemporaryFiles() -> Int? {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: spoolDirectory), !names.isEmpty else { return 0 }
        guard let alone = Self.isOnlyInstance(), alone else { return nil }
        // Compare resolved paths: /proc shows where a descriptor points after symlinks.
        guard let resolved = realpath(spoolDirectory, nil) else { return nil }
        let directory = String(cString: resolved)
        free(resolved)
        guard let open = Self.openFiles(under: directory) else { return nil }
        var removed = 0
        for name in names where !open.contains(directory + "/" + name) {
            if unlink(spoolDirectory + "/" + name) == 0 { removed += 1 }
        }
        return removed
    }

    /// Whether no other process runs this process's executable (`/proc/<pid>/exe`); nil when
    /// `/proc` cannot be read. Processes of other users cannot be read and do not count.
    static func isOnlyInstance() -> Bool? {
        guard let me = link("/proc/self/exe"), let processes = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else {
            return nil
        }
        let own = String(getpid())
        for process in processes where process != own && process.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
            if link("/proc/\(process)/exe") == me { return false }
        }
        return true
    }

    /// Where the symbolic link at `path` points, or nil.
    private static func link(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink(path, &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        buffer[count] = 0
        return String(cString: buffer)
    }

    /// The paths under `directory` that some process's descriptor points at (`/proc/<pid>/fd`),
    /// or nil when `/proc` is not there. Processes whose descriptors cannot be read are skipped:
    /// they belong to other users, who cannot write into the store.
    static func openFiles(under directory: String) -> Set<String>? {
        guard let processes = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return nil }
        let prefix = directory + "/"
        var open = Set<String>()
        for process in processes where process.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
            guard let descriptors = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(process)/fd") else { continue }
            for descriptor in descriptors {
                if let target = link("/proc/\(process)/fd/\(descriptor)"), target.hasPrefix(prefix) { open.insert(target) }
            }
        }
        return open
    }
}
#else
extension LocalBlobStore {
    /// Elsewhere than Linux there is no `/proc` to tell abandoned files: the age-based sweep does it.
    @discardableResult
    public func sweepAbandonedTemporaryFiles() -> Int? { nil }
}
#endif
