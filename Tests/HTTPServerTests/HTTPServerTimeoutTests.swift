import CZlib
import Foundation
import Testing

@testable import HTTPServer

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

// The server's timeouts: idle connections closed, stalled bodies and slow header clients cut off while
// others are served.

@Test(arguments: HTTPIOBackend.available)
func server_ClosesIdleConnections_AndTimesOutStalledBodies(backend: HTTPIOBackend) throws {
    try withServer(
        backend: backend,
        configure: { configuration in
            configuration.timeouts.idleKeepAlive = 0.3
            configuration.timeouts.bodyRead = 0.3
        }, routes: echoRoutes
    ) { server in
        let idle = try RawClient(port: server.port)
        idle.send(get("/hello"))
        #expect(try idle.readResponse().status == 200)
        #expect(idle.isClosedByServer())  // blocks until the idle timeout closes it

        let stalled = try RawClient(port: server.port)
        stalled.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\n\r\nabc")
        let response = try stalled.readResponse()
        #expect(response.status == 408)
        #expect(stalled.isClosedByServer())
    }
}

@Test(arguments: HTTPIOBackend.available)
func server_CutsOffSlowHeaderClient_WhileServingOthers(backend: HTTPIOBackend) throws {
    try withServer(backend: backend, configure: { $0.timeouts.headerRead = 0.5 }, routes: echoRoutes) { server in
        let slow = try RawClient(port: server.port)
        let prefix = Array("GET /hello HTTP/1.1\r\nX-Slow: ".utf8)
        var cutOff = false
        // Trickle one byte every 50 ms for up to 6 s: a per-byte timer reset would never fire.
        for i in 0..<120 {
            if !slow.send([i < prefix.count ? prefix[i] : UInt8(ascii: "z")]) {
                cutOff = true
                break
            }
            if i == 3 {
                // Another client is served meanwhile.
                let other = try RawClient(port: server.port)
                other.send(get("/hello"))
                #expect(try other.readResponse().text == "hello")
            }
            var poll = pollfd(fd: slow.fd, events: Int16(POLLIN), revents: 0)
            if Glibc.poll(&poll, 1, 50) > 0 {
                cutOff = true
                break
            }
        }
        #expect(cutOff)
        let rest = String(decoding: try slow.readToEnd(), as: UTF8.self)
        #expect(rest.hasPrefix("HTTP/1.1 408"))
    }
}
