import Foundation
import Testing

@testable import GalleryApp

/// The iPhone case of issue #13: URLSession sends an upload without `Expect: 100-continue`, in one
/// go. When galleryd refuses it (413 too large, 403 bad key) the client must read the Parse error,
/// not a connection reset. Each refusal is sent 100 times, head and 3 MB of body in one blocking
/// write through a 64 KiB send buffer (as on a real network, the body cannot hide in the kernel).
@Suite(.serialized) struct RefusedUploadTests {
    static let body = [UInt8](repeating: 0xFF, count: 3 * 1024 * 1024)

    /// Status and body of each try; -1 when the write failed (reset, broken pipe).
    static func refused(port: Int, head: String, tries: Int = 100) throws -> [(status: Int, body: String)] {
        var results: [(status: Int, body: String)] = []
        for _ in 0..<tries {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            defer { close(fd) }
            var size: Int32 = 64 * 1024
            setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
            var timeout = timeval(tv_sec: 30, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard connected == 0 else { throw TestSetupError(description: "connect failed") }
            let request = Array(head.utf8) + body
            var offset = 0
            var failed = false
            while offset < request.count {
                let n = request[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                if n <= 0 {
                    failed = true
                    break
                }
                offset += n
            }
            if failed {
                results.append((-1, ""))
                continue
            }
            var received: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                if n <= 0 { break }
                received += buffer[0..<n]
            }
            let response = try? RawHTTP.parse(received)
            results.append((response?.status ?? 0, response?.text ?? ""))
        }
        return results
    }

    @Test func upload_AnswersEveryRefusal_WhenTheClientSendsTheWholeBodyAnyway() throws {
        let server = try TestServer(workers: 0, listening: true) { $0.maxUploadBytes = 1024 * 1024 }
        defer { server.stop() }
        let port = server.application.port

        let tooLarge = try Self.refused(
            port: port,
            head:
                "POST /parse/files/a.jpg HTTP/1.1\r\nHost: t\r\nX-Parse-Application-Id: \(TestServer.appID)\r\nX-Parse-Master-Key: \(TestServer.masterKey)\r\n"
                + "Content-Type: image/jpeg\r\nContent-Length: 900000000\r\n\r\n")
        #expect(tooLarge.filter { $0.status == 413 }.count == 100, "\(tooLarge.map(\.status))")
        #expect(tooLarge.allSatisfy { $0.body.contains("\"code\"") }, "413 in Parse's format")

        let badKey = try Self.refused(
            port: port,
            head: "POST /parse/files/a.jpg HTTP/1.1\r\nHost: t\r\nX-Parse-Application-Id: wrong\r\n"
                + "Content-Type: image/jpeg\r\nContent-Length: \(Self.body.count)\r\n\r\n")
        #expect(badKey.filter { $0.status == 403 }.count == 100, "\(badKey.map(\.status))")
        #expect(badKey.allSatisfy { $0.body == #"{"error":"unauthorized"}"# })
        try server.expectNothingStored("refused uploads")
    }
}
