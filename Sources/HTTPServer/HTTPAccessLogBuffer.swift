import Foundation
import Synchronization

/// One event loop's access log buffer: lines are formatted on the loop thread into a scratch array
/// (no Foundation formatting; the timestamp is formatted once a second, like the Date header) and
/// appended under a lock the writer thread only takes to empty it. When the buffer is full, the
/// line is dropped and counted instead of waiting for the writer.
// @unchecked: `second` and `stamp` are touched only on its event loop's thread; the rest is under `shared`.
final class HTTPAccessLogBuffer: @unchecked Sendable {
    private let format: HTTPAccessLogFormat
    private let capacity: Int
    /// What the loop and the writer share.
    private let shared: Mutex<Shared>
    /// Wakes the writer when the buffer is half full, so a busy loop does not wait for the flush tick.
    private let wake: @Sendable () -> Void

    /// The state under the mutex.
    private struct Shared {
        /// Lines waiting for the writer.
        var pending: [UInt8]
        /// Lines dropped because `pending` was full.
        var droppedLines = 0
        /// Whether the writer has been woken since it last emptied `pending`.
        var wakeRequested = false
    }

    // Loop thread only.
    private var second = -1
    private var stamp: [UInt8] = []

    /// A buffer of `capacity` bytes writing lines in `format`; `wake` asks the writer to come early.
    init(format: HTTPAccessLogFormat, capacity: Int, wake: @escaping @Sendable () -> Void) {
        self.format = format
        self.capacity = max(512, capacity)
        var pending: [UInt8] = []
        pending.reserveCapacity(self.capacity)
        self.shared = Mutex(Shared(pending: pending))
        self.wake = wake
    }

    /// Lines dropped so far because the writer was behind.
    var dropped: Int { shared.withLock { $0.droppedLines } }

    /// Formats one finished exchange and queues it; called on the loop thread. The line is written
    /// straight into the shared buffer under the lock (the writer only holds it to swap buffers),
    /// and taken back out, counted as dropped, if it does not fit.
    func record(
        remote: String, method: String, path: String, status: Int, bytes: Int, nanoseconds: UInt64,
        requestID: String, aborted: Bool
    ) {
        if case .off = format { return }
        let now = time(nil)
        if now != second {
            second = now
            stamp = Self.timestamp(now)
        }
        let micros = Int(nanoseconds / 1000)
        let stamp = self.stamp
        let wakeNow = shared.withLock { shared in
            let start = shared.pending.count
            Self.format(
                format, into: &shared.pending, stamp: stamp, remote: remote, method: method, path: path, status: status,
                bytes: bytes, micros: micros, requestID: requestID, aborted: aborted)
            if shared.pending.count > capacity {
                shared.pending.removeSubrange(start...)
                shared.droppedLines += 1
                return false
            }
            if !shared.wakeRequested && shared.pending.count >= capacity / 2 {
                shared.wakeRequested = true
                return true
            }
            return false
        }
        if wakeNow { wake() }
    }

    /// Appends one line in `format` to `line`, newline included.
    static func format(
        _ format: HTTPAccessLogFormat, into line: inout [UInt8], stamp: [UInt8], remote: String, method: String,
        path: String, status: Int, bytes: Int, micros: Int, requestID: String, aborted: Bool
    ) {
        switch format {
        case .off:
            return
        case .text:
            line.append(contentsOf: stamp)
            line.append(0x20)
            appendText(remote, to: &line)
            line.append(0x20)
            line.append(0x22)
            appendText(method, to: &line)
            line.append(0x20)
            appendText(path, to: &line)
            line.append(0x22)
            line.append(0x20)
            appendDecimal(status, to: &line)
            line.append(0x20)
            appendDecimal(bytes, to: &line)
            line.append(0x20)
            appendMilliseconds(micros, to: &line)
            append("ms ", to: &line)
            appendText(requestID, to: &line)
            if aborted { append(" aborted", to: &line) }
        case .json:
            append("{\"time\":\"", to: &line)
            line.append(contentsOf: stamp)
            append("\",\"remote\":", to: &line)
            appendJSONString(remote, to: &line)
            append(",\"method\":", to: &line)
            appendJSONString(method, to: &line)
            append(",\"path\":", to: &line)
            appendJSONString(path, to: &line)
            append(",\"status\":", to: &line)
            appendDecimal(status, to: &line)
            append(",\"bytes\":", to: &line)
            appendDecimal(bytes, to: &line)
            append(",\"duration_ms\":", to: &line)
            appendMilliseconds(micros, to: &line)
            append(",\"request\":", to: &line)
            appendJSONString(requestID, to: &line)
            if aborted { append(",\"aborted\":true", to: &line) }
            line.append(0x7D)
        }
        line.append(0x0A)
    }

    /// Hands the queued lines to the writer thread: swapped with `out` when that is empty (no copy;
    /// `out`'s storage becomes the next buffer), appended to it otherwise.
    func drain(into out: inout [UInt8]) {
        shared.withLock { shared in
            if out.isEmpty && out.capacity >= capacity {
                swap(&out, &shared.pending)
            } else {
                out.append(contentsOf: shared.pending)
                shared.pending.removeAll(keepingCapacity: true)
            }
            shared.wakeRequested = false
        }
    }

    @inline(__always)
    private static func append(_ text: StaticString, to out: inout [UInt8]) {
        out.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    // MARK: - Formatting without Foundation

    /// `2026-11-23T05:57:02Z` (RFC 3339, UTC).
    static func timestamp(_ seconds: Int) -> [UInt8] {
        var t = time_t(seconds)
        var tm = SystemCalls.BrokenDownTime()
        gmtime_r(&t, &tm)
        var out: [UInt8] = []
        out.reserveCapacity(20)
        func digits(_ n: Int, _ width: Int) {
            var divisor = 1
            for _ in 1..<width { divisor *= 10 }
            var n = n
            while divisor > 0 {
                out.append(UInt8(truncatingIfNeeded: 0x30 + (n / divisor) % 10))
                n %= divisor * 10
                divisor /= 10
            }
        }
        digits(Int(tm.tm_year) + 1900, 4)
        out.append(0x2D)
        digits(Int(tm.tm_mon) + 1, 2)
        out.append(0x2D)
        digits(Int(tm.tm_mday), 2)
        out.append(0x54)
        digits(Int(tm.tm_hour), 2)
        out.append(0x3A)
        digits(Int(tm.tm_min), 2)
        out.append(0x3A)
        digits(Int(tm.tm_sec), 2)
        out.append(0x5A)
        return out
    }

    /// A non-negative integer in decimal.
    static func appendDecimal(_ value: Int, to out: inout [UInt8]) {
        if value < 0 {
            out.append(0x2D)
            appendDecimal(value == Int.min ? Int.max : -value, to: &out)
            return
        }
        if value < 10 {
            out.append(UInt8(truncatingIfNeeded: 0x30 + value))
            return
        }
        // The digits into a buffer on the stack, last first, then one append (decision 041).
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // room for 24 digits
        withUnsafeMutableBytes(of: &digits) { raw in
            var n = value
            var i = raw.count
            while n > 0 {
                i -= 1
                raw[i] = UInt8(truncatingIfNeeded: 0x30 + n % 10)
                n /= 10
            }
            out.append(contentsOf: UnsafeRawBufferPointer(rebasing: raw[i...]))
        }
    }

    /// Microseconds as milliseconds with three decimals: `12.345`.
    static func appendMilliseconds(_ micros: Int, to out: inout [UInt8]) {
        appendDecimal(micros / 1000, to: &out)
        out.append(0x2E)
        let fraction = micros % 1000
        out.append(UInt8(truncatingIfNeeded: 0x30 + fraction / 100))
        out.append(UInt8(truncatingIfNeeded: 0x30 + fraction / 10 % 10))
        out.append(UInt8(truncatingIfNeeded: 0x30 + fraction % 10))
    }

    /// Text for a text line: control characters, spaces inside quotes are fine, but `"`, `\` and
    /// bytes below 0x20 or 0x7F become `\xNN` (as nginx escapes them), so a line stays one line.
    static func appendText(_ text: String, to out: inout [UInt8]) {
        // Nearly every path, address and id needs no escape: checked first, then copied in one go
        // (a byte-by-byte append costs a capacity check per byte; docs/decisions/041).
        let copied = text.utf8.withContiguousStorageIfAvailable { bytes -> Bool in
            for byte in bytes where byte < 0x20 || byte == 0x7F || byte == 0x22 || byte == 0x5C { return false }
            out.append(contentsOf: bytes)
            return true
        }
        if copied == true { return }
        for byte in text.utf8 {
            if byte < 0x20 || byte == 0x7F || byte == 0x22 || byte == 0x5C {
                out.append(0x5C)
                out.append(0x78)
                out.append(hex(byte >> 4))
                out.append(hex(byte & 0xF))
            } else {
                out.append(byte)
            }
        }
    }

    /// A JSON string literal (RFC 8259 §7): quotes, backslash and control characters escaped.
    static func appendJSONString(_ text: String, to out: inout [UInt8]) {
        out.append(0x22)
        for byte in text.utf8 {
            switch byte {
            case 0x22: out.append(contentsOf: [0x5C, 0x22])
            case 0x5C: out.append(contentsOf: [0x5C, 0x5C])
            case 0x0A: out.append(contentsOf: [0x5C, 0x6E])
            case 0x0D: out.append(contentsOf: [0x5C, 0x72])
            case 0x09: out.append(contentsOf: [0x5C, 0x74])
            case 0..<0x20, 0x7F:
                out.append(contentsOf: [0x5C, 0x75, 0x30, 0x30, hex(byte >> 4), hex(byte & 0xF)])
            default: out.append(byte)
            }
        }
        out.append(0x22)
    }

    private static func hex(_ nibble: UInt8) -> UInt8 { nibble < 10 ? 0x30 + nibble : 0x61 + nibble - 10 }
}
