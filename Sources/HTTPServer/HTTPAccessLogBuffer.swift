import Foundation

/// One event loop's access log buffer: lines are formatted on the loop thread into a scratch array
/// (no Foundation formatting; the timestamp is formatted once a second, like the Date header) and
/// appended under a lock the writer thread only takes to empty it. When the buffer is full, the
/// line is dropped and counted instead of waiting for the writer.
final class HTTPAccessLogBuffer: @unchecked Sendable {
    private let format: HTTPAccessLogFormat
    private let capacity: Int
    private let lock = Lock()
    /// Lines waiting for the writer (under `lock`).
    private var pending: [UInt8]
    /// Lines dropped because `pending` was full (under `lock`).
    private var droppedLines = 0
    /// Whether the writer has been woken since it last emptied `pending` (under `lock`).
    private var wakeRequested = false
    /// Wakes the writer when the buffer is half full, so a busy loop does not wait for the flush tick.
    private let wake: () -> Void

    // Loop thread only.
    private var line: [UInt8] = []
    private var second = -1
    private var stamp: [UInt8] = []

    /// A buffer of `capacity` bytes writing lines in `format`; `wake` asks the writer to come early.
    init(format: HTTPAccessLogFormat, capacity: Int, wake: @escaping () -> Void) {
        self.format = format
        self.capacity = max(512, capacity)
        self.pending = []
        self.pending.reserveCapacity(self.capacity)
        self.wake = wake
        line.reserveCapacity(512)
    }

    /// Lines dropped so far because the writer was behind.
    var dropped: Int { lock.withLock { droppedLines } }

    /// Formats one finished exchange and queues it; called on the loop thread.
    func record(
        remote: String, method: String, path: String, status: Int, bytes: Int, nanoseconds: UInt64,
        requestID: String, aborted: Bool
    ) {
        line.removeAll(keepingCapacity: true)
        let now = time(nil)
        if now != second {
            second = now
            stamp = Self.timestamp(now)
        }
        let micros = Int(nanoseconds / 1000)
        switch format {
        case .off:
            return
        case .text:
            line.append(contentsOf: stamp)
            line.append(0x20)
            Self.appendText(remote, to: &line)
            line.append(contentsOf: [0x20, 0x22])
            Self.appendText(method, to: &line)
            line.append(0x20)
            Self.appendText(path, to: &line)
            line.append(contentsOf: [0x22, 0x20])
            Self.appendDecimal(status, to: &line)
            line.append(0x20)
            Self.appendDecimal(bytes, to: &line)
            line.append(0x20)
            Self.appendMilliseconds(micros, to: &line)
            line.append(contentsOf: "ms ".utf8)
            Self.appendText(requestID, to: &line)
            if aborted { line.append(contentsOf: " aborted".utf8) }
        case .json:
            line.append(contentsOf: "{\"time\":\"".utf8)
            line.append(contentsOf: stamp)
            line.append(contentsOf: "\",\"remote\":".utf8)
            Self.appendJSONString(remote, to: &line)
            line.append(contentsOf: ",\"method\":".utf8)
            Self.appendJSONString(method, to: &line)
            line.append(contentsOf: ",\"path\":".utf8)
            Self.appendJSONString(path, to: &line)
            line.append(contentsOf: ",\"status\":".utf8)
            Self.appendDecimal(status, to: &line)
            line.append(contentsOf: ",\"bytes\":".utf8)
            Self.appendDecimal(bytes, to: &line)
            line.append(contentsOf: ",\"duration_ms\":".utf8)
            Self.appendMilliseconds(micros, to: &line)
            line.append(contentsOf: ",\"request\":".utf8)
            Self.appendJSONString(requestID, to: &line)
            if aborted { line.append(contentsOf: ",\"aborted\":true".utf8) }
            line.append(0x7D)
        }
        line.append(0x0A)
        let wakeNow: Bool = lock.withLock {
            if pending.count + line.count > capacity {
                droppedLines += 1
                return false
            }
            pending.append(contentsOf: line)
            if !wakeRequested && pending.count >= capacity / 2 {
                wakeRequested = true
                return true
            }
            return false
        }
        if wakeNow { wake() }
    }

    /// Moves the queued lines to the end of `out` (writer thread).
    func drain(into out: inout [UInt8]) {
        lock.withLock {
            out.append(contentsOf: pending)
            pending.removeAll(keepingCapacity: true)
            wakeRequested = false
        }
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
        let start = out.count
        var n = value
        while n > 0 {
            out.append(UInt8(truncatingIfNeeded: 0x30 + n % 10))
            n /= 10
        }
        out[start...].reverse()
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
        for byte in text.utf8 {
            if byte < 0x20 || byte == 0x7F || byte == 0x22 || byte == 0x5C {
                out.append(contentsOf: [0x5C, 0x78, hex(byte >> 4), hex(byte & 0xF)])
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
