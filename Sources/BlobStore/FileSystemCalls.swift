#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `struct stat`, spelled the same on Linux and Darwin.
#if canImport(Glibc)
    typealias FileStatus = Glibc.stat
#else
    typealias FileStatus = Darwin.stat
#endif

extension FileStatus {
    /// The modification time (`st_mtim` on Linux, `st_mtimespec` on Darwin).
    var modificationTime: timespec {
        #if canImport(Glibc)
            return st_mtim
        #else
            return st_mtimespec
        #endif
    }
}

/// The few file calls the store needs qualified (its own methods shadow the bare names).
enum FileSystemCalls {
    /// `openat(2)`.
    static func openAt(_ directory: Int32, _ path: UnsafePointer<CChar>, _ flags: Int32) -> Int32 {
        #if canImport(Glibc)
            return Glibc.openat(directory, path, flags)
        #else
            return Darwin.openat(directory, path, flags)
        #endif
    }
}
