import Crypto
import Foundation

/// The opening handshake (RFC 6455 §4.2): whether a request asks for an upgrade and the
/// `101 Switching Protocols` answer.
enum WebSocketHandshake {
    /// The GUID §1.3 appends to the key.
    static let guid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

    /// Whether the request asks to switch to WebSocket (`Upgrade: websocket`, `Connection: upgrade`).
    static func isUpgrade(_ headers: HTTPHeaders) -> Bool {
        headers.containsToken("websocket", in: "Upgrade") && headers.containsToken("upgrade", in: "Connection")
    }

    /// The `Sec-WebSocket-Key` when the request is a valid version-13 handshake (§4.2.1: a
    /// base64 nonce of 16 bytes), or nil.
    static func key(_ headers: HTTPHeaders) -> String? {
        guard headers["Sec-WebSocket-Version"]?.trimmingSpaces() == "13",
            let key = headers["Sec-WebSocket-Key"]?.trimmingSpaces(),
            let nonce = Data(base64Encoded: key), nonce.count == 16
        else { return nil }
        return key
    }

    /// `Sec-WebSocket-Accept`: base64(SHA-1(key + GUID)) (§4.2.2 item 5.4).
    static func accept(key: String) -> String {
        Data(Insecure.SHA1.hash(data: Array((key + guid).utf8))).base64EncodedString()
    }

    /// The whole 101 response head.
    static func switchingProtocols(key: String) -> [UInt8] {
        Array(
            ("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Accept: \(accept(key: key))\r\nServer: galleryd\r\n\r\n").utf8)
    }
}
