import Foundation
import Synchronization
import Testing

@testable import BlobStore

/// A minimal HTTP/1.1 server on a loopback socket that answers every request with the same
/// keep-alive response and counts the connections it accepted (moto closes after each answer, so
/// connection reuse is tested here).
private final class KeepAliveServer: Sendable {
    let listener: Int32
    let port: Int
    private let accepted = Atomic(0)

    init(response: String) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        listen(fd, 16)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        listener = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        let answer = Array(response.utf8)
        Thread.detachNewThread { [self] in
            while true {
                let client = accept(listener, nil, nil)
                if client < 0 { return }
                accepted.add(1, ordering: .relaxed)
                Thread.detachNewThread { Self.serve(client, answer) }
            }
        }
    }

    var connectionsAccepted: Int {
        accepted.load(ordering: .relaxed)
    }

    private static func serve(_ client: Int32, _ answer: [UInt8]) {
        defer { close(client) }
        var pending = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(client, $0.baseAddress, $0.count, 0) }
            if n <= 0 { return }
            pending.append(contentsOf: buffer[0..<n])
            // Requests without bodies: answer once per complete head.
            while let end = pending.firstRange(of: [13, 10, 13, 10]) {
                let isHead = pending.starts(with: Array("HEAD ".utf8))
                pending.removeSubrange(0..<end.upperBound)
                // A HEAD answer has the same header fields and no body (RFC 9110 §9.3.2).
                let reply = isHead ? Array(answer[..<(answer.firstRange(of: [13, 10, 13, 10])!.upperBound)]) : answer
                _ = reply.withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            }
        }
    }

    deinit {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }
}

@Test func socketTransport_ReusesOneKeepAliveConnection_ForSequentialRequests() throws {
    let server = try KeepAliveServer(response: "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nETag: \"abc\"\r\n\r\nhello")
    let transport = S3SocketTransport(host: "127.0.0.1", port: server.port, timeout: 5)
    let client = S3Client(
        configuration: S3Configuration(
            endpoint: URL(string: "http://127.0.0.1:\(server.port)")!, bucket: "b", accessKeyId: "k",
            secretAccessKey: "s"),
        transport: transport)
    for _ in 0..<10 {
        #expect(try client.getObjectBytes("x.jpg") == Array("hello".utf8))
        #expect(try client.headObject("x.jpg")?.header("etag") == "\"abc\"")
    }
    #expect(transport.connectionsOpened == 1)
    #expect(server.connectionsAccepted == 1)
}

@Test func socketTransport_ReadsChunkedBodies() throws {
    let server = try KeepAliveServer(
        response: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n1;ext=1\r\n!\r\n0\r\n\r\n")
    let client = S3Client(
        configuration: S3Configuration(
            endpoint: URL(string: "http://127.0.0.1:\(server.port)")!, bucket: "b", accessKeyId: "k",
            secretAccessKey: "s"))
    #expect(try client.getObjectBytes("x.jpg") == Array("hello!".utf8))
    #expect(try client.getObjectBytes("x.jpg") == Array("hello!".utf8))
    #expect(server.connectionsAccepted == 1)
}
