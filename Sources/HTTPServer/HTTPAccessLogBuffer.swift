import Foundation
import Synchronization

/// One event loop's access log buffer: lines are formatted on the loop thread into raw scratch
/// memory (`ScratchBytes`; no Foundation formatting; the timestamp is formatted once a second, like
/// the Date header) and appended in one copy under a lock the writer thread only takes to empty it.
/// When the buffer is full, the line is dropped and counted instead of waiting for the writer.
// @unchecked: `second`, `stamp` and `line` are touched only on its event loop's thread; the rest is under `shared`.
final class HTTPAccessLogBuffer: @unchecked Sendable {
    private let format: HTTPAccessLogFormat
    private let capacity: Int
    /// What the loop and the writer share.
    private let shared: Mutex<Shared>
    /// Wakes the writer when the buffer is half full, so a busy loop does not wait for the flush tick.
    private let wake: @Sendable () -> Void

    /// The state under the mutex.
    private struct Shared {
        /// Lines waiting for the writer, in raw memory kept from one drain to the next: a line goes
        /// in with one copy, not an array append (~100 instructions, decision 041, round 7).
        let pending: PendingLines
        /// Lines dropped because `pending` was full.
        var droppedLines = 0
        /// Whether the writer has been woken since it last emptied `pending`.
        var wakeRequested = false
    }

    // Loop thread only.
    private var second = -1
    private var stamp: [UInt8] = []
    /// The line being formatted.
    private let line = ScratchBytes(capacity: 512)

    /// A buffer of `capacity` bytes writing lines in `format`; `wake` asks the writer to come early.
    init(format: HTTPAccessLogFormat, capacity: Int, wake: @escaping @Sendable () -> Void) {
        self.format = format
        self.capacity = max(512, capacity)
        self.shared = Mutex(Shared(pending: PendingLines(capacity: self.capacity)))
        self.wake = wake
    }

    /// Lines dropped so far because the writer was behind.
    var dropped: Int { shared.withLock { $0.droppedLines } }

    /// Formats one finished exchange and queues it; called on the loop thread. The line is formatted
    /// outside the lock, then copied into the shared buffer under it (the writer only holds it to
    /// swap buffers), or counted as dropped if it does not fit. `remote`, `method` and `requestID`
    /// are the server's own text (an address it formatted, a method token the parser checked, an id
    /// it made: none holds a byte either format escapes), copied as they are; only `path`, decoded
    /// from the client's escapes, is checked.
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
        line.removeAll()
        Self.format(
            format, into: line, stamp: stamp, remote: remote, method: method, path: path, status: status,
            bytes: bytes, micros: Int(nanoseconds / 1000), requestID: requestID, aborted: aborted)
        let text = UnsafeRawBufferPointer(line.bytes)
        let wakeNow = shared.withLock { shared in
            if shared.pending.count + text.count > capacity {
                shared.droppedLines += 1
                return false
            }
            shared.pending.append(text)
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
        _ format: HTTPAccessLogFormat, into line: ScratchBytes, stamp: [UInt8], remote: String, method: String,
        path: String, status: Int, bytes: Int, micros: Int, requestID: String, aborted: Bool
    ) {
        switch format {
        case .off:
            return
        case .text:
            line.append(stamp)
            line.append(0x20)
            appendVerbatim(remote, to: line)
            line.append(0x20)
            line.append(0x22)
            appendVerbatim(method, to: line)
            line.append(0x20)
            appendText(path, to: line)
            line.append(0x22)
            line.append(0x20)
            line.appendDecimal(status)
            line.append(0x20)
            line.appendDecimal(bytes)
            line.append(0x20)
            appendMilliseconds(micros, to: line)
            line.append("ms ")
            appendVerbatim(requestID, to: line)
            if aborted { line.append(" aborted") }
        case .json:
            line.append("{\"time\":\"")
            line.append(stamp)
            line.append("\",\"remote\":\"")
            appendVerbatim(remote, to: line)
            line.append("\",\"method\":\"")
            appendVerbatim(method, to: line)
            line.append(0x22)
            line.append(",\"path\":")
            appendJSONString(path, to: line)
            line.append(",\"status\":")
            line.appendDecimal(status)
            line.append(",\"bytes\":")
            line.appendDecimal(bytes)
            line.append(",\"duration_ms\":")
            appendMilliseconds(micros, to: line)
            line.append(",\"request\":\"")
            appendVerbatim(requestID, to: line)
            line.append(0x22)
            if aborted { line.append(",\"aborted\":true") }
            line.append(0x7D)
        }
        line.append(0x0A)
    }

    /// Hands the queued lines to the writer thread, appended to `out` (one copy per drain, at most
    /// once a second or per half buffer, instead of one array append per line).
    func drain(into out: inout [UInt8]) {
        shared.withLock { shared in
            shared.pending.move(into: &out)
            shared.wakeRequested = false
        }
    }

    /// The lines waiting for the writer: raw memory, touched only under `shared`'s lock.
    // @unchecked: every use is under the lock of the `Shared` that holds it.
    private final class PendingLines: @unchecked Sendable {
        private let bytes: ScratchBytes

        init(capacity: Int) { bytes = ScratchBytes(capacity: capacity) }

        /// Bytes waiting.
        var count: Int { bytes.count }

        /// Appends one line.
        func append(_ line: UnsafeRawBufferPointer) { bytes.append(line) }

        /// Appends the waiting bytes to `out` and forgets them (the memory is kept).
        func move(into out: inout [UInt8]) {
            out.append(contentsOf: bytes.bytes)
            bytes.removeAll()
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

    /// Microseconds as milliseconds with three decimals: `12.345`.
    static func appendMilliseconds(_ micros: Int, to out: ScratchBytes) {
        out.appendDecimal(micros / 1000)
        out.appendFraction(micros % 1000)
    }

    /// Text of the server's own that needs no escape in either format, copied as it is.
    @inline(__always)
    static func appendVerbatim(_ text: String, to out: ScratchBytes) {
        // A native string's bytes, borrowed in place: `withUTF8` needs a `var` copy of the string
        // (a retain and a release each, three a line; decision 041, round 8).
        if text.utf8.withContiguousStorageIfAvailable({ out.append(UnsafeRawBufferPointer($0)) }) == nil {
            var text = text
            text.withUTF8 { out.append(UnsafeRawBufferPointer($0)) }
        }
    }

    /// Text for a text line: control characters, spaces inside quotes are fine, but `"`, `\` and
    /// bytes below 0x20 or 0x7F become `\xNN` (as nginx escapes them), so a line stays one line.
    static func appendText(_ text: String, to out: ScratchBytes) {
        // Nearly every path, address and id needs no escape: checked first, then copied in one go
        // (a byte-by-byte append costs a capacity check per byte; docs/decisions/041).
        // The check goes eight bytes at a time (ASCIIScan).
        let copied = text.utf8.withContiguousStorageIfAvailable { bytes -> Bool in
            let raw = UnsafeRawBufferPointer(bytes)
            if ASCIIScan.needsLogEscape(raw) { return false }
            out.append(raw)
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
    static func appendJSONString(_ text: String, to out: ScratchBytes) {
        out.append(0x22)
        for byte in text.utf8 {
            switch byte {
            case 0x22: out.append("\\\"")
            case 0x5C: out.append("\\\\")
            case 0x0A: out.append("\\n")
            case 0x0D: out.append("\\r")
            case 0x09: out.append("\\t")
            case 0..<0x20, 0x7F:
                out.append("\\u00")
                out.append(hex(byte >> 4))
                out.append(hex(byte & 0xF))
            default: out.append(byte)
            }
        }
        out.append(0x22)
    }

    private static func hex(_ nibble: UInt8) -> UInt8 { nibble < 10 ? 0x30 + nibble : 0x61 + nibble - 10 }
}
