import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Random access to the first bytes of an image, so the probe reads only the header segments
/// of a file (a few kilobytes) and never the entropy-coded data.
protocol HeaderByteSource {
    /// Up to `count` bytes at `offset`; fewer at the end of the data.
    func read(at offset: Int, count: Int) throws -> ArraySlice<UInt8>
}

/// Bytes already in memory.
struct MemoryByteSource: HeaderByteSource {
    /// The whole file.
    let bytes: [UInt8]

    /// A slice of the bytes, shorter at the end.
    func read(at offset: Int, count: Int) throws -> ArraySlice<UInt8> {
        guard offset < bytes.count else { return [] }
        return bytes[offset..<min(bytes.count, offset + count)]
    }
}

/// A file read with `pread`, through one cached block that covers the usual small header.
final class FileByteSource: HeaderByteSource {
    private let descriptor: Int32
    private var cache: [UInt8] = []
    private static let blockSize = 65_536

    /// Opens `path` for reading.
    init(path: String) throws {
        descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw ImageError.io("\(path): \(String(cString: strerror(errno)))") }
        cache = try readBlock(at: 0, count: Self.blockSize)
    }

    deinit { close(descriptor) }

    /// From the cached first block when it covers the range, else straight from the file.
    func read(at offset: Int, count: Int) throws -> ArraySlice<UInt8> {
        if offset + count <= cache.count || cache.count < Self.blockSize {
            guard offset < cache.count else { return [] }
            return cache[offset..<min(cache.count, offset + count)]
        }
        return try readBlock(at: offset, count: count)[...]
    }

    private func readBlock(at offset: Int, count: Int) throws -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            let n = buffer.withUnsafeMutableBytes { raw in
                pread(descriptor, raw.baseAddress! + filled, count - filled, off_t(offset + filled))
            }
            if n < 0 {
                if errno == EINTR { continue }
                throw ImageError.io(String(cString: strerror(errno)))
            }
            if n == 0 { break }
            filled += n
        }
        buffer.removeSubrange(filled...)
        return buffer
    }
}
