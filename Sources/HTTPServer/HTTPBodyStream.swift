import Foundation

/// A response body that arrives while it is sent: a bounded pipe between a producer on any thread
/// (e.g. a GET from an object store) and the connection that writes it to the client.
///
/// Backpressure: `write` waits while `capacity` bytes are buffered, so the producer never reads
/// faster than the client takes (plus this buffer and the kernel's socket buffers). Aborts go both
/// ways: the connection cancels the stream when the client is gone or too slow (the producer's
/// next `write` throws `HTTPBodyStream.Cancelled`, so it stops reading its source), and a producer
/// that `fail`s makes the connection drop the client instead of leaving it waiting for bytes that
/// will never come (the head already announced the length).
// @unchecked: its state is guarded by `condition` (a full buffer makes `write` wait, which Mutex cannot do).
public final class HTTPBodyStream: @unchecked Sendable {
    /// What the consumer gets from `read()`.
    enum Chunk {
        /// Bytes to send.
        case bytes([UInt8])
        /// Nothing buffered yet: the waker runs once more is there.
        case pending
        /// The producer finished.
        case end
        /// The producer failed; the message is for the log.
        case failed(String)
    }

    /// Thrown by `write` once the consumer has cancelled: stop producing.
    public struct Cancelled: Error, CustomStringConvertible {
        public var description: String { "the response body's consumer is gone" }
    }

    /// Bytes buffered at most before `write` waits. Default 256 KiB.
    public let capacity: Int
    private let condition = NSCondition()
    private var chunks: [[UInt8]] = []
    private var head = 0
    private var buffered = 0
    private var finished = false
    private var failure: String?
    private var cancelled = false
    private var consumerWaiting = false
    private var waker: (@Sendable () -> Void)?
    private var written = 0

    /// A stream buffering at most `capacity` bytes (at least one chunk is always accepted).
    public init(capacity: Int = 256 * 1024) {
        self.capacity = max(1, capacity)
    }

    // MARK: Producer

    /// Appends a copy of `bytes`, first waiting while the buffer is full. Throws `Cancelled` when
    /// the consumer is gone (before or while waiting).
    public func write(_ bytes: UnsafeRawBufferPointer) throws {
        guard bytes.count > 0 else { return }
        condition.lock()
        while buffered >= capacity && !cancelled { condition.wait() }
        if cancelled {
            condition.unlock()
            throw Cancelled()
        }
        chunks.append(Array(bytes))
        buffered += bytes.count
        written += bytes.count
        let wake = takeWaker()
        condition.unlock()
        wake?()
    }

    /// The producer is done: the consumer sends what is buffered, then ends the response.
    public func finish() {
        condition.lock()
        finished = true
        let wake = takeWaker()
        condition.unlock()
        wake?()
    }

    /// The producer failed: the consumer drops the connection once it has sent what is buffered.
    public func fail(_ message: String) {
        condition.lock()
        if failure == nil { failure = message }
        let wake = takeWaker()
        condition.unlock()
        wake?()
    }

    /// Whether the consumer has cancelled (the client is gone).
    public var isCancelled: Bool {
        condition.lock()
        defer { condition.unlock() }
        return cancelled
    }

    /// Bytes the producer has written so far (for tests and metrics).
    public var bytesWritten: Int {
        condition.lock()
        defer { condition.unlock() }
        return written
    }

    /// Bytes buffered now, written but not yet taken by the consumer.
    public var bytesBuffered: Int {
        condition.lock()
        defer { condition.unlock() }
        return buffered
    }

    // MARK: Consumer (the connection's loop)

    /// Sets what runs (on the producer's thread) when `read()` returned `.pending` and there is
    /// something new; the connection hops back onto its loop from there.
    func setWaker(_ wake: @escaping @Sendable () -> Void) {
        condition.lock()
        waker = wake
        condition.unlock()
    }

    /// The next buffered chunk, without waiting.
    func read() -> Chunk {
        condition.lock()
        defer { condition.unlock() }
        if head < chunks.count {
            let chunk = chunks[head]
            head += 1
            if head == chunks.count {
                chunks.removeAll(keepingCapacity: true)
                head = 0
            }
            buffered -= chunk.count
            condition.signal()
            return .bytes(chunk)
        }
        if let failure { return .failed(failure) }
        if finished { return .end }
        consumerWaiting = true
        return .pending
    }

    /// The consumer stops for good (response written, client gone, timeout, shutdown): drops the
    /// buffer and the waker and wakes a waiting producer, whose `write` then throws `Cancelled`.
    public func cancel() {
        condition.lock()
        cancelled = true
        chunks.removeAll()
        head = 0
        buffered = 0
        waker = nil
        consumerWaiting = false
        condition.broadcast()
        condition.unlock()
    }

    /// The waker, if the consumer waits for it (called with the lock held; run it after unlocking).
    private func takeWaker() -> (@Sendable () -> Void)? {
        guard consumerWaiting else { return nil }
        consumerWaiting = false
        return waker
    }
}
