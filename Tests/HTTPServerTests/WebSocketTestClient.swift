import Foundation
import Testing

@testable import HTTPServer

/// A raw WebSocket client over `RawClient`: the handshake, and frames built byte by byte so a test
/// can break any rule (no mask, a huge length, a fragmented ping).
final class WebSocketTestClient {
    /// The frame the server sent.
    struct Frame: Equatable {
        var fin: Bool
        var opcode: UInt8
        var payload: [UInt8]

        /// The close code of a close frame.
        var closeCode: UInt16? {
            opcode == 0x8 && payload.count >= 2 ? UInt16(payload[0]) << 8 | UInt16(payload[1]) : nil
        }
    }

    let client: RawClient
    /// The status of the handshake's answer.
    private(set) var handshake: RawClient.Response!

    /// Connects and performs the opening handshake on `path`.
    init(port: Int, path: String = "/ws", key: String = "dGhlIHNhbXBsZSBub25jZQ==", extraHeaders: String = "") throws {
        client = try RawClient(port: port, receiveTimeout: 5)
        _ = client.send(
            "GET \(path) HTTP/1.1\r\nHost: test\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Key: \(key)\r\nSec-WebSocket-Version: 13\r\n\(extraHeaders)\r\n")
        handshake = try client.readResponse(bodyless: true)
    }

    /// Sends one frame; `mask` nil sends it unmasked (illegal from a client).
    func send(
        opcode: UInt8, _ payload: [UInt8], fin: Bool = true, mask: [UInt8]? = [0x37, 0xFA, 0x21, 0x3D],
        declaredLength: UInt64? = nil
    ) {
        var bytes: [UInt8] = [(fin ? 0x80 : 0) | opcode]
        let length = declaredLength ?? UInt64(payload.count)
        let maskBit: UInt8 = mask == nil ? 0 : 0x80
        if length < 126 {
            bytes.append(maskBit | UInt8(length))
        } else if length <= 0xFFFF {
            bytes += [maskBit | 126, UInt8(length >> 8), UInt8(length & 0xFF)]
        } else {
            bytes.append(maskBit | 127)
            for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8((length >> UInt64(shift)) & 0xFF)) }
        }
        if let mask {
            bytes += mask
            bytes += payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
        } else {
            bytes += payload
        }
        _ = client.send(bytes)
    }

    /// Sends a text message in one frame.
    func send(text: String) { send(opcode: 0x1, Array(text.utf8)) }

    /// Reads one frame from the server.
    func readFrame() throws -> Frame {
        let head = try client.readBytes(2)
        #expect(head[1] & 0x80 == 0, "server frames are never masked")
        var length = UInt64(head[1] & 0x7F)
        if length == 126 {
            let ext = try client.readBytes(2)
            length = UInt64(ext[0]) << 8 | UInt64(ext[1])
        } else if length == 127 {
            length = try client.readBytes(8).reduce(0) { $0 << 8 | UInt64($1) }
        }
        return Frame(fin: head[0] & 0x80 != 0, opcode: head[0] & 0x0F, payload: try client.readBytes(Int(length)))
    }

    /// Reads frames until a close frame and returns its code (nil when the server only dropped the socket).
    func readCloseCode() -> UInt16? {
        while let frame = try? readFrame() {
            if frame.opcode == 0x8 { return frame.closeCode }
        }
        return nil
    }
}
