import Foundation
import GalleryTestSupport
import Testing

/// The JavaScript SDK's JSON upload in a `galleryd serve` process of its own (so no other test's
/// memory counts): its peak RSS (VmHWM) does not grow with the file, as the body is read in one
/// pass and the base64 decoded as it is read (decision 027, session 23). Read whole and parsed, a
/// 24 MB file's upload (a 32 MB body) raised it by about 2 × 4/3 of the file, some 64 MB.
@Suite struct JSONUploadMemoryTests {
    static func peakKB(_ pid: Int32) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") })
        return try #require(Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]))
    }

    /// The SDK's request (`text/plain`, the keys after the base64) for `bytes`, with the master key.
    static func request(_ bytes: [UInt8]) -> [UInt8] {
        let body =
            #"{"base64":""# + Data(bytes).base64EncodedString() + #"","fileData":{"metadata":{},"tags":{}},"#
            + #""_ApplicationId":"\#(TestKeys.appID)","_ClientVersion":"js5.3.0","_MasterKey":"\#(TestKeys.masterKey)"}"#
        let head =
            "POST /parse/files/big.jpg HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain;charset=UTF-8\r\n"
            + "Content-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n"
        return Array((head + body).utf8)
    }

    @Test func jsonUpload_PeakMemory_DoesNotGrowWithTheFile() throws {
        let database = try ScratchDatabase(prefix: "galleryd_json_memory")
        defer { database.drop() }
        let serve = try ServeProcess(databaseURL: database.url)
        defer { _ = try? serve.stop() }
        let port = try #require(Int(serve.baseURL.split(separator: ":").last ?? ""))
        let pid = serve.process.processIdentifier
        // Bytes of no image format: the whole body is read and decoded to the spool before the
        // format check refuses it (130), so nothing is stored and the path is the one of a photo.
        var state: UInt64 = 24
        let small = (0..<64 * 1024).map { _ in UInt8(truncatingIfNeeded: Self.next(&state)) }
        let warm = try RawHTTPClient.exchange(port: port, bytes: Self.request(small))
        #expect(warm.status == 400 && warm.text.contains("Unsupported file format"), "\(warm.text)")
        let before = try Self.peakKB(pid)
        let file = (0..<24_000_000).map { _ in UInt8(truncatingIfNeeded: Self.next(&state)) }
        let big = try RawHTTPClient.exchange(port: port, bytes: Self.request(file))
        #expect(big.status == 400 && big.text.contains("Unsupported file format"), "\(big.text)")
        let grown = try Self.peakKB(pid) - before
        print("JSONUploadMemoryTests: VmHWM \(before) kB before, grew by \(grown) kB for a 24 MB file")
        #expect(grown < 12 * 1024, "VmHWM grew by \(grown) kB for a 24 MB file")
    }

    /// SplitMix64: bytes that do not compress and look like no format.
    static func next(_ state: inout UInt64) -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
