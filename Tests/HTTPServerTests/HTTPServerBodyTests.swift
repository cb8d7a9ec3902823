import CZlib
import Foundation
import Testing

@testable import HTTPServer

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

// The server reading request bodies: chunked, `100-continue`, the per-route limit, and bodies streamed to
// a file past the in-memory threshold with the route's observer seeing every byte.

@Test(arguments: HTTPIOBackend.available)
func server_ReceivesChunkedUpload(backend: HTTPIOBackend) throws {
    try withServer(
        backend: backend,
        routes: { router in
            echoRoutes(router)
            router.add(.post, "/trailer") { request in .text(request.trailers["X-Trailer"] ?? "none") }
        }
    ) { server in
        let client = try RawClient(port: server.port)
        client.send("POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n")
        client.send("6\r\nhello \r\n")
        client.send("5;ext=1\r\nworld\r\n0\r\nX-Trailer: yes\r\n\r\n")
        let response = try client.readResponse()
        #expect(response.status == 200)
        #expect(response.text == "hello world")
        client.send(
            "POST /trailer HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\nX-Trailer: yes\r\n\r\n"
        )
        #expect(try client.readResponse().text == "yes")
    }
}

@Test(arguments: HTTPIOBackend.available)
func server_SendsContinue_WhenRouteAcceptsBody(backend: HTTPIOBackend) throws {
    try withServer(backend: backend, routes: echoRoutes) { server in
        let client = try RawClient(port: server.port)
        client.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n")
        let interim = try client.readResponse()
        #expect(interim.status == 100)
        client.send("abcde")
        let response = try client.readResponse()
        #expect(response.status == 200)
        #expect(response.text == "abcde")
    }
}

@Test(arguments: HTTPIOBackend.available)
func server_Answers413WithoutContinue_WhenBodyTooLargeForRoute(backend: HTTPIOBackend) throws {
    try withServer(backend: backend, routes: echoRoutes) { server in
        let client = try RawClient(port: server.port)
        client.send("POST /small HTTP/1.1\r\nHost: t\r\nContent-Length: 100\r\nExpect: 100-continue\r\n\r\n")
        try client.expectClosingAnswer(413)
    }
}

// @unchecked: fed on the loop thread; the handler reads it after the body is complete.
private final class CountingObserver: HTTPBodyObserver, @unchecked Sendable {
    var count = 0
    var sum: UInt64 = 0
    func consume(_ chunk: UnsafeRawBufferPointer) {
        count += chunk.count
        for byte in chunk { sum &+= UInt64(byte) }
    }
}

@Test(arguments: HTTPIOBackend.available)
func server_StreamsLargeBodyToFile_AndObserverSeesEveryByte(backend: HTTPIOBackend) throws {
    let payload = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
    let expectedSum = payload.reduce(UInt64(0)) { $0 &+ UInt64($1) }
    let tempDir = NSTemporaryDirectory() + "galleryd-body-test-\(UInt32.random(in: 0...UInt32.max))"
    try FileManager.default.createDirectory(atPath: tempDir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: tempDir) }
    try withServer(
        backend: backend, configure: { $0.temporaryDirectory = tempDir },
        routes: { router in
            router.add(
                HTTPRoute(.post, "/upload", maxBodyBytes: 1 << 20, bodyObserverFactory: { CountingObserver() }) {
                    request in
                    guard case .file(let path, let length) = request.body else {
                        throw HTTPError(.badRequest, "not a file body")
                    }
                    let observer = request.bodyObserver as! CountingObserver
                    let onDisk = try Data(contentsOf: URL(fileURLWithPath: path))
                    let sameBytes = Array(onDisk) == payload
                    return .text("\(length) \(observer.count) \(observer.sum) \(sameBytes) \(path.hasPrefix(tempDir))")
                })
        }
    ) { server in
        for chunked in [false, true] {
            let client = try RawClient(port: server.port)
            if chunked {
                client.send("POST /upload HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n")
                var offset = 0
                while offset < payload.count {
                    let n = min(70_000, payload.count - offset)
                    client.send(String(n, radix: 16) + "\r\n")
                    client.send(Array(payload[offset..<offset + n]))
                    client.send("\r\n")
                    offset += n
                }
                client.send("0\r\n\r\n")
            } else {
                client.send("POST /upload HTTP/1.1\r\nHost: t\r\nContent-Length: \(payload.count)\r\n\r\n")
                client.send(payload)
            }
            let response = try client.readResponse()
            #expect(response.status == 200)
            #expect(response.text == "\(payload.count) \(payload.count) \(expectedSum) true true")
        }
    }
    // The server removed the temporary files after responding.
    #expect(try FileManager.default.contentsOfDirectory(atPath: tempDir).isEmpty)
}
