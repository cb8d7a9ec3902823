import Foundation

/// Finds whether a JPEG reaches its end-of-image marker (EOI, `FF D9`): walks the marker segments
/// (ITU T.81 §B.1.1.2, length-prefixed) and the entropy-coded data after each SOS, where `FF 00` is
/// a stuffed byte and `FF D0`–`FF D7` are restart markers (§B.1.1.5), until EOI or the end of the
/// file. A file cut off in transit has no EOI; bytes after EOI (a Motion Photo's video, a maker
/// trailer) are allowed. One sequential pass; the entropy data is skipped with `memchr`.
public enum JPEGEndOfImage {
    /// Whether the file at `path` is a JPEG that reaches EOI. Throws `ImageError.io` when it cannot be read.
    public static func isComplete(fileAt path: String) throws -> Bool {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw ImageError.io("open \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var reader = Reader(fd: fd)
        return try walk(&reader)
    }

    /// Whether in-memory JPEG bytes reach EOI.
    public static func isComplete(bytes: [UInt8]) -> Bool {
        var reader = Reader(bytes: bytes)
        return (try? walk(&reader)) ?? false
    }

    private static func walk(_ reader: inout Reader) throws -> Bool {
        guard try reader.next() == 0xFF, try reader.next() == 0xD8 else { return false }
        var pending: UInt8?  // a marker already read while skipping entropy-coded data
        while true {
            let marker: UInt8
            if let found = pending {
                marker = found
                pending = nil
            } else {
                // Find the next marker: skip anything up to FF (libjpeg tolerates extraneous bytes), then fill bytes.
                guard try reader.skip(to: 0xFF) else { return false }
                var byte: UInt8
                repeat {
                    guard let next = try reader.next() else { return false }
                    byte = next
                } while byte == 0xFF
                marker = byte
            }
            switch marker {
            case 0xD9:
                return true
            case 0x00, 0x01, 0xD0...0xD8:
                continue  // no length: stuffed zero outside a scan, TEM, RSTn, a repeated SOI
            default:
                guard let high = try reader.next(), let low = try reader.next() else { return false }
                let length = Int(high) << 8 | Int(low)
                guard length >= 2, try reader.skip(count: length - 2) else { return false }
                if marker == 0xDA { pending = try skipEntropyData(&reader) }
                if marker == 0xDA && pending == nil { return false }
            }
        }
    }

    /// Skips a scan's entropy-coded data; returns the marker that ends it, or nil at end of file.
    private static func skipEntropyData(_ reader: inout Reader) throws -> UInt8? {
        while true {
            guard try reader.skip(to: 0xFF) else { return nil }
            var byte: UInt8
            repeat {
                guard let next = try reader.next() else { return nil }
                byte = next
            } while byte == 0xFF
            if byte == 0x00 || (0xD0...0xD7).contains(byte) { continue }
            return byte
        }
    }

    /// Sequential bytes from a file (1 MiB at a time) or memory.
    private struct Reader {
        let fd: Int32
        var buffer: [UInt8]
        var position = 0
        var end: Int

        init(fd: Int32) {
            self.fd = fd
            buffer = [UInt8](repeating: 0, count: 1 << 20)
            end = 0
        }

        init(bytes: [UInt8]) {
            fd = -1
            buffer = bytes
            end = bytes.count
        }

        /// Refills the buffer; false at end of input.
        private mutating func fill() throws -> Bool {
            guard fd >= 0 else { return false }
            while true {
                let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if n < 0 {
                    if errno == EINTR { continue }
                    throw ImageError.io("read: \(String(cString: strerror(errno)))")
                }
                position = 0
                end = n
                return n > 0
            }
        }

        mutating func next() throws -> UInt8? {
            if position == end, try !fill() { return nil }
            defer { position += 1 }
            return buffer[position]
        }

        /// Advances past the next `byte`; false when the input ends first.
        mutating func skip(to byte: UInt8) throws -> Bool {
            while true {
                if position == end, try !fill() { return false }
                let found: Int? = buffer.withUnsafeBytes { raw in
                    guard let hit = memchr(raw.baseAddress! + position, Int32(byte), end - position) else { return nil }
                    return raw.baseAddress!.distance(to: UnsafeRawPointer(hit))
                }
                if let found {
                    position = found + 1
                    return true
                }
                position = end
            }
        }

        /// Advances `count` bytes; false when the input ends first.
        mutating func skip(count: Int) throws -> Bool {
            var remaining = count
            while remaining > 0 {
                if position == end, try !fill() { return false }
                let step = min(remaining, end - position)
                position += step
                remaining -= step
            }
            return true
        }
    }
}
