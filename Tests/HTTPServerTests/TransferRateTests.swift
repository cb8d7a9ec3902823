import Foundation
import Testing

@testable import HTTPServer

private func uploadRoutes(_ router: HTTPRouter) {
    router.add(.post, "/upload", maxBodyBytes: 1 << 20) { request in .text("got \(request.body.count)") }
}

@Test(arguments: HTTPIOBackend.available)
func server_Answers408_ToABodyTrickledBelowTheMinimumRate(backend: HTTPIOBackend) throws {
    try withServer(
        backend: backend,
        configure: { configuration in
            configuration.timeouts.bodyRead = 5  // each byte arrives well inside the stall timeout
            configuration.timeouts.minimumBodyRate = 1000
            configuration.timeouts.minimumRateGrace = 0.5
        }, routes: uploadRoutes
    ) { server in
        let client = try RawClient(port: server.port)
        client.send("POST /upload HTTP/1.1\r\nHost: t\r\nContent-Length: 100000\r\n\r\n")
        let start = Date()
        var closed = false
        for _ in 0..<40 where !closed {
            closed = !client.send("x")
            usleep(100_000)
            if client.hasPendingInput() { break }
        }
        let response = try client.readResponse()
        #expect(response.status == 408)
        #expect(response.text.contains("too slow"))
        #expect(client.isClosedByServer())
        // Cut after the grace period, long before the 5 s stall timeout would have been reached.
        #expect(Date().timeIntervalSince(start) < 3)
    }
}

@Test(arguments: HTTPIOBackend.available)
func server_AcceptsASlowButSteadyBody_AboveTheMinimumRate(backend: HTTPIOBackend) throws {
    try withServer(
        backend: backend,
        configure: { configuration in
            configuration.timeouts.minimumBodyRate = 1000
            configuration.timeouts.minimumRateGrace = 0.2
        }, routes: uploadRoutes
    ) { server in
        let client = try RawClient(port: server.port)
        client.send("POST /upload HTTP/1.1\r\nHost: t\r\nContent-Length: 8000\r\n\r\n")
        // 8000 bytes over about 1.6 s: 5000 B/s, five times the minimum.
        for _ in 0..<16 {
            client.send([UInt8](repeating: 0x61, count: 500))
            usleep(100_000)
        }
        let response = try client.readResponse()
        #expect(response.status == 200)
        #expect(response.text == "got 8000")
    }
}

@Test(arguments: HTTPIOBackend.available)
func server_DropsAClientReadingBelowTheMinimumRate(backend: HTTPIOBackend) throws {
    let path = NSTemporaryDirectory() + "galleryd-slow-reader-\(UInt32.random(in: 0...UInt32.max))"
    let size = 32 << 20
    try Data(count: size).write(to: URL(fileURLWithPath: path))
    defer { unlink(path) }
    try withServer(
        backend: backend,
        configure: { configuration in
            configuration.timeouts.write = 10  // the reader keeps making progress; only the rate stops it
            configuration.timeouts.minimumResponseRate = 4_000_000
            configuration.timeouts.minimumRateGrace = 0.5
        },
        routes: { router in
            router.add(.get, "/big", mayBlock: false) { _ in
                HTTPResponse(body: .file(path: path, offset: 0, length: size))
            }
        }
    ) { server in
        let client = try RawClient(port: server.port, receiveBuffer: 4096)
        client.send(get("/big"))
        let start = Date()
        var received = 0
        var buffer = [UInt8](repeating: 0, count: 4096)
        // About 400 KB/s, a tenth of the minimum: the server must give up within a second or two.
        while Date().timeIntervalSince(start) < 8 {
            let n = buffer.withUnsafeMutableBytes { recv(client.fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { break }
            received += n
            usleep(10_000)
        }
        #expect(received < size)
        #expect(Date().timeIntervalSince(start) < 6)
    }
}
