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
    /// The file's bytes once a reader asked for them (`contents(atMost:)`): set once, released
    /// with this object. An atomic pointer, as `AtomicLazyReference.load()` is not inlined
    /// (a generic call and a metadata lookup, about 550 instructions per request).
    private let contents = Atomic<Unmanaged<Contents>?>(nil)

    /// A small file's bytes, read once.
    private final class Contents: Sendable {
        let bytes: [UInt8]
        init(_ bytes: [UInt8]) { self.bytes = bytes }
    }

    /// Takes ownership of `fd`, described by `info`.
    init(fd: Int32, info: BlobInfo) {
        self.fd = fd
        self.info = info
        lastModified = Self.imfFixdate(Int(info.modified.timeIntervalSince1970.rounded(.down)))
    }

    deinit {
        contents.load(ordering: .acquiring)?.release()
        close(fd)
    }

    /// The whole file when it has at most `limit` bytes: read with `pread` the first time, then
    /// kept with the descriptor, so a small file served again and again is sent from memory with
    /// its head in one write (the display sizes: decision 059). Nil for a larger file, or when the
    /// read fails or comes up short of the size `fstat` gave (the reader then sends from `fd`).
    /// Blobs are replaced by renaming a new file over the key, never written in place, so the
    /// bytes stay those of this descriptor.
    public func contents(atMost limit: Int) -> [UInt8]? {
        if let kept = contents.load(ordering: .acquiring) { return kept.takeUnretainedValue().bytes }
        let size = Int(info.size)
        guard size <= limit else { return nil }
        var bytes = [UInt8](repeating: 0, count: size)
        let complete = bytes.withUnsafeMutableBytes { buffer -> Bool in
            var done = 0
            while done < size {
                let n = pread(fd, buffer.baseAddress! + done, size - done, off_t(done))
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { return false }
                done += n
            }
            return true
        }
        guard complete else { return nil }
        let made = Unmanaged.passRetained(Contents(bytes))
        let (stored, first) = contents.compareExchange(expected: nil, desired: made, ordering: .acquiringAndReleasing)
        if stored { return bytes }
        made.release()  // another reader kept its copy first: answer with that one
        return first?.takeUnretainedValue().bytes ?? bytes
    }

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
