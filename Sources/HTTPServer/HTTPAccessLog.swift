import Foundation
import Synchronization

/// The access log: a buffer per event loop and one writer thread that empties them into the
/// output at least every `flushInterval`, when a buffer is half full, and at shutdown. The loops
/// never write to the output themselves, so a slow or blocked stderr/journald costs dropped lines
/// (counted in `dropped`), never a stalled request.
final class HTTPAccessLog: Sendable {
    /// One buffer per event loop, by loop index.
    let buffers: [HTTPAccessLogBuffer]
    private let configuration: HTTPAccessLogConfiguration
    private let wakeUp = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    private let state = Mutex(State())

    /// The writer's lifecycle and failures, under the mutex.
    private struct State {
        var running = false
        var stopping = false
        /// Lines the output refused (a write error other than a retryable one).
        var failedLines = 0
    }

    /// A log with one buffer for each of `loops` event loops; `start()` starts the writer.
    init(configuration: HTTPAccessLogConfiguration, loops: Int) {
        self.configuration = configuration
        let wakeUp = self.wakeUp
        buffers = (0..<max(1, loops)).map { _ in
            HTTPAccessLogBuffer(format: configuration.format, capacity: configuration.bufferBytes) { wakeUp.signal() }
        }
    }

    /// Lines dropped so far: buffers full while the writer was behind, or refused by the output.
    var dropped: Int { buffers.reduce(0) { $0 + $1.dropped } + state.withLock { $0.failedLines } }

    /// Starts the writer thread.
    func start() {
        let go = state.withLock { state in
            if state.running || state.stopping { return false }
            state.running = true
            return true
        }
        guard go else { return }
        let thread = Thread { [self] in run() }
        thread.name = "galleryd-access-log"
        thread.start()
    }

    /// Writes what is buffered and stops the writer, waiting at most `timeout` seconds for an output
    /// that does not take the bytes. Idempotent.
    func stop(timeout: Double = 2) {
        let wasRunning = state.withLock { state in
            if state.stopping { return false }
            state.stopping = true
            return state.running
        }
        guard wasRunning else { return }
        wakeUp.signal()
        if finished.wait(timeout: .now() + .milliseconds(Int(max(0, timeout) * 1000))) == .success {
            finished.signal()
        }
    }

    private func run() {
        var chunk: [UInt8] = []
        chunk.reserveCapacity(configuration.bufferBytes * buffers.count)
        let interval = max(0.01, configuration.flushInterval)
        while true {
            _ = wakeUp.wait(timeout: .now() + .milliseconds(Int(interval * 1000)))
            let last = state.withLock { $0.stopping }
            flush(&chunk)
            if last { break }
        }
        finished.signal()
    }

    /// Empties every buffer into `chunk` and writes it out, retrying short writes and EINTR.
    private func flush(_ chunk: inout [UInt8]) {
        chunk.removeAll(keepingCapacity: true)
        for buffer in buffers { buffer.drain(into: &chunk) }
        if chunk.isEmpty { return }
        let fd = configuration.fileDescriptor
        chunk.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let n = SystemCalls.write(fd, raw.baseAddress! + offset, raw.count - offset)
                if n > 0 {
                    offset += n
                } else if n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) {
                    if errno != EINTR { usleep(1000) }
                } else {
                    let lost = raw[offset...].reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }
                    state.withLock { $0.failedLines += lost }
                    return
                }
            }
        }
    }
}
