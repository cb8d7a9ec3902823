import Foundation

/// A growable byte buffer with a read and a write index, owned by one connection.
/// Bytes are read from the socket straight into it and parsed in place.
final class ByteBuffer {
    private(set) var storage: UnsafeMutableRawPointer?
    private(set) var capacity = 0
    private(set) var readerIndex = 0
    private(set) var writerIndex = 0

    /// An empty buffer; memory is allocated on first use.
    init() {}

    deinit { storage?.deallocate() }

    /// Bytes written and not yet consumed.
    var readableCount: Int { writerIndex - readerIndex }

    /// The unconsumed bytes.
    var readable: UnsafeRawBufferPointer {
        guard let storage else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        return UnsafeRawBufferPointer(start: storage + readerIndex, count: writerIndex - readerIndex)
    }

    /// Drops `n` consumed bytes; an emptied buffer rewinds to its start.
    @inline(__always)
    func consume(_ n: Int) {
        readerIndex += n
        if readerIndex == writerIndex {
            readerIndex = 0
            writerIndex = 0
        }
    }

    /// Space to write at least `minimum` bytes into, compacting or growing as needed (never past `limit`
    /// unless the unconsumed bytes already need it).
    func writableSpace(minimum: Int) -> UnsafeMutableRawBufferPointer {
        if capacity - writerIndex < minimum {
            if readerIndex > 0 {
                let n = writerIndex - readerIndex
                if n > 0 { memmove(storage!, storage! + readerIndex, n) }
                readerIndex = 0
                writerIndex = n
            }
            if capacity - writerIndex < minimum {
                var newCapacity = max(capacity * 2, 4096)
                while newCapacity - writerIndex < minimum { newCapacity *= 2 }
                let fresh = UnsafeMutableRawPointer.allocate(byteCount: newCapacity, alignment: 16)
                if let storage {
                    if writerIndex > 0 { fresh.copyMemory(from: storage, byteCount: writerIndex) }
                    storage.deallocate()
                }
                storage = fresh
                capacity = newCapacity
            }
        }
        return UnsafeMutableRawBufferPointer(start: storage! + writerIndex, count: capacity - writerIndex)
    }

    /// Records `n` bytes written into `writableSpace`.
    @inline(__always)
    func didWrite(_ n: Int) { writerIndex += n }

    /// Frees memory of an empty buffer that grew large (after a big head), keeping idle connections cheap.
    func shrinkIfEmpty(above threshold: Int) {
        if readableCount == 0, capacity > threshold {
            storage?.deallocate()
            storage = nil
            capacity = 0
            readerIndex = 0
            writerIndex = 0
        }
    }
}
