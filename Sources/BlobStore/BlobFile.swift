import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An open blob shared by whoever reads it: the open-file cache and every response being sent
/// from it hold the same descriptor, which closes when the last of them lets go. A cache hit is
/// then a reference count instead of a `dup(2)` and a `close(2)`; readers must send with explicit
/// offsets (`sendfile` with an offset, `pread`), as the file position is shared.
public final class BlobFile: Sendable {
    /// The open descriptor; valid while this object lives. Never close it: the object does.
    public let fd: Int32
    /// Size, modification time and ETag from the `fstat` at open time.
    public let info: BlobInfo
    /// `info.modified` as an IMF-fixdate (`Last-Modified`), formatted once for every reader.
    public let lastModified: String
    /// A number a reader may swap in (`exchange`) to do something once per file and round rather
    /// than on every read: the size cache counts a rendition as used once per eviction round,
    /// not with a lock and a hash on every warm request. 0 on a newly opened file.
    public let mark = Atomic<UInt64>(0)

    /// Takes ownership of `fd`, described by `info`.
    init(fd: Int32, info: BlobInfo) {
        self.fd = fd
        self.info = info
        lastModified = Self.imfFixdate(Int(info.modified.timeIntervalSince1970.rounded(.down)))
    }

    deinit { close(fd) }

    private static let days: StaticString = "SunMonTueWedThuFriSat"
    private static let months: StaticString = "JanFebMarAprMayJunJulAugSepOctNovDec"

    /// `Sun, 06 Nov 1994 08:49:37 GMT` (RFC 9110 §5.6.7); the store knows no HTTP, so this is its own
    /// small copy of the format rather than the HTTP layer's.
    static func imfFixdate(_ seconds: Int) -> String {
        var t = time_t(seconds)
        var tm = FileTime()
        gmtime_r(&t, &tm)
        func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
        func name(_ letters: StaticString, _ index: Int32) -> String {
            String(decoding: UnsafeBufferPointer(start: letters.utf8Start + 3 * Int(index), count: 3), as: UTF8.self)
        }
        return "\(name(days, tm.tm_wday)), \(two(tm.tm_mday)) \(name(months, tm.tm_mon)) \(Int(tm.tm_year) + 1900) "
            + "\(two(tm.tm_hour)):\(two(tm.tm_min)):\(two(tm.tm_sec)) GMT"
    }
}

#if canImport(Glibc)
    typealias FileTime = Glibc.tm
#else
    typealias FileTime = Darwin.tm
#endif
