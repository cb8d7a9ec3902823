import Foundation
import Synchronization
import Testing

@testable import HTTPServer

/// Echoes every message back from another thread (as event fan-out does) and records close codes.
private final class EchoHandler: WebSocketHandler, Sendable {
    private let codes = Mutex<[UInt16]>([])

    var closeCodes: [UInt16] { codes.withLock { $0 } }

    func opened(_ socket: WebSocket) {}

    func received(text: String, on socket: WebSocket) {
        DispatchQueue.global().async { socket.send(text: text) }
    }

    func received(binary: [UInt8], on socket: WebSocket) {
        DispatchQueue.global().async { socket.send(binary: binary) }
    }

    func closed(_ socket: WebSocket, code: WebSocketCloseCode) {
        codes.withLock { $0.append(code.rawValue) }
    }
}

private func webSocketRoutes(_ handler: EchoHandler) -> (HTTPRouter) -> Void {
    { router in
        var limits = WebSocketLimits()
        limits.maxFrameBytes = 1024
        limits.maxMessageBytes = 4096
        router.add(
            HTTPRoute(
                .get, "/ws", mayBlock: false, webSocket: { _ in handler }, webSocketLimits: limits,
                handler: HTTPClosureHandler { _ in .text("upgrade required", status: .badRequest) }))
        router.add(.get, "/hello", mayBlock: false) { _ in .text("hello") }
    }
}

/// The server is still up and answering plain HTTP.
private func expectServerUp(_ port: Int) throws {
    let response = try RawClient.exchange(
        port: port, head: "GET /hello HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
    #expect(response.status == 200)
}

@Test func handshake_AcceptValue_MatchesRFC6455Example() {
    // RFC 6455 §1.3's worked example.
    #expect(WebSocketHandshake.accept(key: "dGhlIHNhbXBsZSBub25jZQ==") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
}

@Test func frameDecoder_ReturnsSameFrames_WholeAndByteByByte() throws {
    let decoder = WebSocketFrameDecoder(limits: WebSocketLimits())
    let mask: [UInt8] = [1, 2, 3, 4]
    let payload = Array("hello".utf8)
    let frame: [UInt8] = [0x81, 0x85] + mask + payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
    let whole = try frame.withUnsafeBytes { try decoder.next($0) }
    #expect(whole?.frame == WebSocketFrame(fin: true, opcode: .text, payload: payload))
    #expect(whole?.consumed == frame.count)
    for cut in 0..<frame.count {
        let partial = try Array(frame[0..<cut]).withUnsafeBytes { try decoder.next($0) }
        #expect(partial == nil)
    }
    let two = frame + frame
    let first = try two.withUnsafeBytes { try decoder.next($0) }
    #expect(first?.consumed == frame.count)
}

@Test(arguments: HTTPIOBackend.available)
func webSocket_Upgrades_AndEchoesTextBinaryFragmentsAndPings(backend: HTTPIOBackend) throws {
    let handler = EchoHandler()
    try withServer(backend: backend, routes: webSocketRoutes(handler)) { server in
        let ws = try WebSocketTestClient(port: server.port)
        #expect(ws.handshake.status == 101)
        #expect(ws.handshake.headers["Sec-WebSocket-Accept"] == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
        ws.send(text: "héllo")
        #expect(try ws.readFrame() == .init(fin: true, opcode: 0x1, payload: Array("héllo".utf8)))
        ws.send(opcode: 0x2, [0, 1, 2, 255])
        #expect(try ws.readFrame() == .init(fin: true, opcode: 0x2, payload: [0, 1, 2, 255]))
        // A fragmented message with a ping between its fragments (§5.4 allows control frames there).
        ws.send(opcode: 0x1, Array("frag".utf8), fin: false)
        ws.send(opcode: 0x9, Array("p".utf8))
        ws.send(opcode: 0x0, Array("mented".utf8))
        #expect(try ws.readFrame() == .init(fin: true, opcode: 0xA, payload: Array("p".utf8)))
        #expect(try ws.readFrame() == .init(fin: true, opcode: 0x1, payload: Array("fragmented".utf8)))
        // A message over 126 bytes (16-bit length) comes back whole.
        let long = String(repeating: "x", count: 900)
        ws.send(text: long)
        #expect(try ws.readFrame().payload.count == 900)
        // The closing handshake: our 1000 is echoed.
        ws.send(opcode: 0x8, [0x03, 0xE8])
        #expect(ws.readCloseCode() == 1000)
        #expect(try ws.client.readToEnd().isEmpty)
        try expectServerUp(server.port)
    }
    #expect(handler.closeCodes == [1000])
}

@Test(arguments: HTTPIOBackend.available)
func webSocket_RefusesBadHandshake_WithBadRequest(backend: HTTPIOBackend) throws {
    try withServer(backend: backend, routes: webSocketRoutes(EchoHandler())) { server in
        let ws = try WebSocketTestClient(port: server.port, key: "short")
        #expect(ws.handshake.status == 400)
        #expect(ws.handshake.headers["Sec-WebSocket-Version"] == "13")
        // Without Upgrade the route is plain HTTP.
        let plain = try RawClient.exchange(
            port: server.port, head: "GET /ws HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        #expect(plain.status == 400)
        try expectServerUp(server.port)
    }
}

/// One hostile input: the bytes a client sends after the handshake, and the close code expected.
struct HostileFrame: CustomStringConvertible, Sendable {
    let description: String
    let code: UInt16
    let send: @Sendable (WebSocketTestClient) -> Void
}

private let hostileFrames: [HostileFrame] = [
    HostileFrame(description: "unmasked client frame", code: 1002) {
        $0.send(opcode: 0x1, Array("hi".utf8), mask: nil)
    },
    HostileFrame(description: "declared length over the frame limit", code: 1009) {
        $0.send(opcode: 0x2, [], declaredLength: 1 << 40)
    },
    HostileFrame(description: "64-bit length with the top bit set", code: 1002) {
        $0.send(opcode: 0x2, [], declaredLength: 1 << 63)
    },
    HostileFrame(description: "message over the limit in fragments", code: 1009) {
        $0.send(opcode: 0x2, [UInt8](repeating: 7, count: 1000), fin: false)
        for _ in 0..<4 { $0.send(opcode: 0x0, [UInt8](repeating: 7, count: 1000), fin: false) }
        $0.send(opcode: 0x0, [UInt8](repeating: 7, count: 1000))
    },
    HostileFrame(description: "bad UTF-8 in a text frame", code: 1007) { $0.send(opcode: 0x1, [0x68, 0xC3, 0x28]) },
    HostileFrame(description: "bad UTF-8 split over fragments", code: 1007) {
        $0.send(opcode: 0x1, [0x68, 0xF0, 0x9F], fin: false)
        $0.send(opcode: 0x0, [0x41])
    },
    HostileFrame(description: "fragmented ping", code: 1002) { $0.send(opcode: 0x9, [1], fin: false) },
    HostileFrame(description: "ping over 125 bytes", code: 1002) {
        $0.send(opcode: 0x9, [UInt8](repeating: 0, count: 126))
    },
    HostileFrame(description: "continuation without a message", code: 1002) { $0.send(opcode: 0x0, [1]) },
    HostileFrame(description: "new message inside a fragmented one", code: 1002) {
        $0.send(opcode: 0x1, [0x61], fin: false)
        $0.send(opcode: 0x1, [0x62])
    },
    HostileFrame(description: "reserved opcode", code: 1002) { $0.send(opcode: 0x3, []) },
    HostileFrame(description: "reserved bit", code: 1002) { $0.send(opcode: 0x40 | 0x1, [0x61]) },
    HostileFrame(description: "close with a 1-byte payload", code: 1002) { $0.send(opcode: 0x8, [3]) },
    HostileFrame(description: "close with code 1005", code: 1002) { $0.send(opcode: 0x8, [0x03, 0xED]) },
]

@Test(arguments: HTTPIOBackend.available, hostileFrames)
func webSocket_ClosesWithRightCode_AndStaysUp_OnHostileFrame(backend: HTTPIOBackend, hostile: HostileFrame) throws {
    let handler = EchoHandler()
    try withServer(backend: backend, routes: webSocketRoutes(handler)) { server in
        let ws = try WebSocketTestClient(port: server.port)
        #expect(ws.handshake.status == 101)
        hostile.send(ws)
        #expect(ws.readCloseCode() == hostile.code, "\(hostile)")
        // A second client still gets its echo, and plain HTTP still works.
        let other = try WebSocketTestClient(port: server.port)
        other.send(text: "still here")
        #expect(try other.readFrame().payload == Array("still here".utf8))
        try expectServerUp(server.port)
    }
    // The hostile connection's handler heard the code it was closed with (the other one's 1001 at shutdown).
    #expect(handler.closeCodes.contains(hostile.code))
}

@Test(arguments: HTTPIOBackend.available)
func webSocket_PingsIdleClient_AndDropsOneThatNeverAnswers(backend: HTTPIOBackend) throws {
    try withServer(
        backend: backend,
        routes: { router in
            var limits = WebSocketLimits()
            limits.pingInterval = 0.2
            limits.pongTimeout = 0.2
            router.add(
                HTTPRoute(
                    .get, "/ws", mayBlock: false, webSocket: { _ in EchoHandler() }, webSocketLimits: limits,
                    handler: HTTPClosureHandler { _ in .text("no") }))
        }
    ) { server in
        let ws = try WebSocketTestClient(port: server.port)
        #expect(try ws.readFrame().opcode == 0x9)
        // No pong: the server drops the connection.
        #expect(try ws.client.readToEnd().isEmpty)
    }
}

@Test(arguments: HTTPIOBackend.available)
func webSocket_ShutdownClosesWithGoingAway(backend: HTTPIOBackend) throws {
    let handler = EchoHandler()
    var client: WebSocketTestClient?
    try withServer(backend: backend, routes: webSocketRoutes(handler)) { server in
        client = try WebSocketTestClient(port: server.port)
        client!.send(text: "x")
        _ = try client!.readFrame()
    }
    #expect(client?.readCloseCode() == 1001)
    #expect(handler.closeCodes == [1001])
}
