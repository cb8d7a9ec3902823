import Dispatch
import Foundation

/// Hands blocks of decoded rows from the decoding thread to a resampling thread.
///
/// A fixed ring of row blocks and two semaphores (free blocks, filled blocks): the producer
/// fills a free block with libjpeg scanlines, the consumer converts and resamples a filled one
/// and frees it. A zero-row block closes the ring. Memory stays a few dozen rows.
///
/// `@unchecked Sendable`: the block pointers and counts are handed over through the semaphores,
/// which order every write before the matching read.
// @unchecked: block pointers and counts are handed over through the semaphores (see above).
final class RowBlockRing: @unchecked Sendable {
    /// One decoded row on the consumer side, with a float row to convert it into.
    struct Row {
        /// The decoded bytes.
        let bytes: UnsafePointer<UInt8>
        /// Scratch floats for the converted row.
        let floats: UnsafeMutablePointer<Float>
        /// The floats the producer prepared for this row (`preparedFloats` of them), if the ring has any.
        let prepared: UnsafeMutablePointer<Float>?
    }

    /// Waits for the consumer and returns the nanoseconds it spent working.
    struct Consumer {
        fileprivate let done: DispatchSemaphore
        fileprivate let ring: RowBlockRing

        func wait() -> UInt64 {
            done.wait()
            return ring.busyNanoseconds
        }
    }

    private let blockCount: Int
    private let rowsPerBlock: Int
    private let rowBytes: Int
    private let storage: UnsafeMutablePointer<UInt8>
    private let rowPointers: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>
    private let counts: UnsafeMutablePointer<Int>
    private let free: DispatchSemaphore
    private let filled = DispatchSemaphore(value: 0)
    /// Floats per row the producer may prepare beside the bytes (0: none).
    let preparedFloats: Int
    private let preparedStorage: UnsafeMutablePointer<Float>?
    private var produceIndex = 0
    private var closed = false
    private var busyNanoseconds: UInt64 = 0

    /// A ring of `blocks` blocks of `rowsPerBlock` rows of `rowBytes` bytes, and of
    /// `preparedFloats` floats per row that the producer fills for the consumer (work moved to
    /// the decoding thread, such as the horizontal resampling pass).
    init(blocks: Int, rowsPerBlock: Int, rowBytes: Int, preparedFloats: Int = 0) {
        blockCount = blocks
        self.preparedFloats = preparedFloats
        preparedStorage =
            preparedFloats > 0
            ? UnsafeMutableRawPointer.allocate(
                byteCount: blocks * rowsPerBlock * preparedFloats * MemoryLayout<Float>.stride, alignment: 64
            ).bindMemory(to: Float.self, capacity: blocks * rowsPerBlock * preparedFloats) : nil
        self.rowsPerBlock = rowsPerBlock
        self.rowBytes = rowBytes
        storage = .allocate(capacity: blocks * rowsPerBlock * rowBytes)
        rowPointers = .allocate(capacity: blocks * rowsPerBlock)
        for i in 0..<blocks * rowsPerBlock { rowPointers[i] = storage + i * rowBytes }
        counts = .allocate(capacity: blocks)
        counts.initialize(repeating: 0, count: blocks)
        // Start at zero and signal up: libdispatch traps when a semaphore is released holding
        // less than its initial value, which is where a closed ring leaves `free`.
        free = DispatchSemaphore(value: 0)
        for _ in 0..<blocks { free.signal() }
    }

    deinit {
        storage.deallocate()
        rowPointers.deallocate()
        counts.deallocate()
        preparedStorage.map { UnsafeMutableRawPointer($0).deallocate() }
    }

    /// Fills the next block with `fill(rows, capacity)`, which returns the rows written.
    func produce(_ fill: (UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>, Int) throws -> Int) throws -> Int {
        try produce { rows, _, capacity in try fill(rows, capacity) }
    }

    /// Hands every decoded row of `raster` to the ring, block by block, in order: `fill(source, r,
    /// rows, prepared)` fills row `r` of the block from the decoded row at `source`.
    func produce(
        rowsOf raster: any RasterRows,
        _ fill: (
            UnsafePointer<UInt8>, Int, UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>, UnsafeMutablePointer<Float>?
        )
            -> Void
    ) throws {
        try raster.forEachRun { first, stride, count in
            var done = 0
            while done < count {
                let start = done
                done += try produce { rows, prepared, capacity in
                    let taken = min(capacity, count - start)
                    for r in 0..<taken { fill(first + (start + r) * stride, r, rows, prepared) }
                    return taken
                }
            }
        }
    }

    /// Fills the next block with `fill(rows, prepared, capacity)`: row `r`'s prepared floats are
    /// at `prepared + r * preparedFloats` (nil when the ring has none).
    func produce(
        _ fill: (UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>, UnsafeMutablePointer<Float>?, Int) throws -> Int
    ) throws -> Int {
        free.wait()
        let block = produceIndex % blockCount
        let count: Int
        do {
            count = try fill(
                rowPointers + block * rowsPerBlock, preparedStorage.map { $0 + block * rowsPerBlock * preparedFloats },
                rowsPerBlock)
        } catch {
            free.signal()
            throw error
        }
        counts[block] = count
        produceIndex += 1
        filled.signal()
        return count
    }

    /// Tells the consumer no more rows will come. Call exactly once, also after an error.
    func close() {
        guard !closed else { return }
        closed = true
        free.wait()
        counts[produceIndex % blockCount] = 0
        filled.signal()
    }

    /// Starts the consumer thread, calling `body` for every row in order.
    ///
    /// A dedicated thread rather than a Dispatch queue: the producer blocks on the ring, and if
    /// the callers themselves run on the (bounded) global pool, a queued consumer might never
    /// get a thread.
    func consume(width: Int, channels: Int, _ body: @escaping (Row) -> Void) -> Consumer {
        // Unchecked: `body` (and the resamplers it holds) runs on the consumer thread alone until `wait()`.
        nonisolated(unsafe) let body = body
        let done = DispatchSemaphore(value: 0)
        let thread = Thread { [self] in
            defer { done.signal() }
            let floatCount = width * channels
            let floats = UnsafeMutableRawPointer.allocate(
                byteCount: max(floatCount, 1) * MemoryLayout<Float>.stride, alignment: 64
            ).bindMemory(to: Float.self, capacity: floatCount)
            defer { UnsafeMutableRawPointer(floats).deallocate() }
            var index = 0
            while true {
                filled.wait()
                let block = index % blockCount
                let count = counts[block]
                if count == 0 { break }
                let t0 = Stopwatch.nanoseconds()
                for r in 0..<count {
                    let index = block * rowsPerBlock + r
                    body(
                        Row(
                            bytes: UnsafePointer(rowPointers[index]!), floats: floats,
                            prepared: preparedStorage.map { $0 + index * preparedFloats }))
                }
                busyNanoseconds += Stopwatch.nanoseconds() - t0
                index += 1
                free.signal()
            }
        }
        thread.name = "galleryd-resample"
        thread.stackSize = 1 << 20
        thread.start()
        return Consumer(done: done, ring: self)
    }
}
