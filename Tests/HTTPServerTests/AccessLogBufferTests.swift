import Foundation
import Testing

@testable import HTTPServer

/// One loop's access-log buffer without a server: the exact bytes of a line, the numbers in it,
/// and what the writer gets when it drains the buffer (decision 041, round 7).
@Suite struct AccessLogBufferTests {
    private let stamp = Array("2026-11-23T05:57:02Z".utf8)

    private func line(
        _ format: HTTPAccessLogFormat, path: String = "/health", status: Int = 200, bytes: Int = 164,
        micros: Int = 41, aborted: Bool = false
    ) -> String {
        let out = ScratchBytes(capacity: 64)
        HTTPAccessLogBuffer.format(
            format, into: out, stamp: stamp, remote: "127.0.0.1:40312", method: "GET", path: path,
            status: status, bytes: bytes, micros: micros, requestID: "3f2a-0.1", aborted: aborted)
        return String(decoding: out.bytes, as: UTF8.self)
    }

    @Test func format_WritesTheLinesOperationsMdShows_ByteForByte() {
        #expect(line(.text) == "2026-11-23T05:57:02Z 127.0.0.1:40312 \"GET /health\" 200 164 0.041ms 3f2a-0.1\n")
        #expect(
            line(.text, path: "/a\"b\\c\u{01}", status: 404, bytes: 0, micros: 1_234_567, aborted: true)
                == "2026-11-23T05:57:02Z 127.0.0.1:40312 \"GET /a\\x22b\\x5cc\\x01\" 404 0 1234.567ms 3f2a-0.1 aborted\n"
        )
        #expect(
            line(.json, path: "/a\"b", status: 503, bytes: 1000, micros: 999)
                == "{\"time\":\"2026-11-23T05:57:02Z\",\"remote\":\"127.0.0.1:40312\",\"method\":\"GET\","
                + "\"path\":\"/a\\\"b\",\"status\":503,\"bytes\":1000,\"duration_ms\":0.999,\"request\":\"3f2a-0.1\"}\n"
        )
    }

    @Test func appendDecimal_WritesEveryNumberAsSwiftPrintsIt() {
        let numbers = [
            0, 1, 9, 10, 42, 99, 100, 164, 999, 1000, 1001, 65_536, 1_234_567_890, Int.max, -1, -999, Int.min,
        ]
        for number in numbers {
            let out = ScratchBytes(capacity: 64)
            out.append("x")
            out.appendDecimal(number)
            out.append("y")
            // Int.min is written as -Int.max (its magnitude does not fit an Int).
            let expected = number == Int.min ? "-\(Int.max)" : "\(number)"
            #expect(String(decoding: out.bytes, as: UTF8.self) == "x\(expected)y", "\(number)")
        }
    }

    @Test func drain_HandsTheWriterEveryLineInOrder_AndDropsWhatDoesNotFit() {
        let buffer = HTTPAccessLogBuffer(format: .text, capacity: 512) {}
        for i in 0..<3 {
            buffer.record(
                remote: "127.0.0.1:1", method: "GET", path: "/items/\(i)", status: 200, bytes: 10, nanoseconds: 5_000,
                requestID: "r-0.\(i)", aborted: false)
        }
        var out: [UInt8] = []
        buffer.drain(into: &out)
        let lines = String(decoding: out, as: UTF8.self).split(separator: "\n")
        #expect(lines.count == 3)
        #expect(lines.enumerated().allSatisfy { $0.element.hasSuffix(" 200 10 0.005ms r-0.\($0.offset)") })
        #expect(lines.enumerated().allSatisfy { $0.element.contains("\"GET /items/\($0.offset)\"") })
        // Drained: the next drain adds only what came after, after what the writer already holds.
        buffer.record(
            remote: "127.0.0.1:1", method: "GET", path: "/after", status: 204, bytes: 0, nanoseconds: 0,
            requestID: "r-0.9", aborted: false)
        buffer.drain(into: &out)
        #expect(String(decoding: out, as: UTF8.self).split(separator: "\n").count == 4)
        #expect(String(decoding: out, as: UTF8.self).hasSuffix("\"GET /after\" 204 0 0.000ms r-0.9\n"))
        // A full buffer (two lines of ~207 bytes in 512) drops the line and counts it.
        out.removeAll()
        let long = "/" + String(repeating: "p", count: 150)
        for _ in 0..<4 {
            buffer.record(
                remote: "127.0.0.1:1", method: "GET", path: long, status: 200, bytes: 1, nanoseconds: 0,
                requestID: "r", aborted: false)
        }
        #expect(buffer.dropped == 2)
        buffer.drain(into: &out)
        #expect(String(decoding: out, as: UTF8.self).split(separator: "\n").count == 2)
        #expect(buffer.dropped == 2)
    }

    /// The default buffer holds 10,000 typical lines (77 ms at 130,000 requests a second) before its
    /// writer runs at all, for a loop whose writer thread shares its core. nginx's 64 KiB, the old
    /// default, holds about 800: pinned to one core it dropped 0.1–0.2% of the lines (decision 041, round 10).
    @Test func defaultBuffer_HoldsABurstOfTenThousandLines_BeforeTheWriterRuns() {
        let configuration = HTTPAccessLogConfiguration()
        let buffer = HTTPAccessLogBuffer(format: .text, capacity: configuration.bufferBytes) {}
        for i in 0..<10_000 {
            buffer.record(
                remote: "127.0.0.1:40312", method: "GET", path: "/health", status: 200, bytes: 334,
                nanoseconds: 41_000, requestID: "3f2a-0.\(i)", aborted: false)
        }
        #expect(buffer.dropped == 0)
        var out: [UInt8] = []
        buffer.drain(into: &out)
        #expect(String(decoding: out, as: UTF8.self).split(separator: "\n").count == 10_000)
    }
}
