/// A frame's opcode (RFC 6455 §5.2, §11.8). Closed set: anything else is a protocol error.
enum WebSocketOpcode: UInt8 {
    /// A further fragment of a message (§5.4).
    case continuation = 0x0
    /// The first frame of a UTF-8 text message.
    case text = 0x1
    /// The first frame of a binary message.
    case binary = 0x2
    /// Close (§5.5.1).
    case close = 0x8
    /// Ping (§5.5.2).
    case ping = 0x9
    /// Pong (§5.5.3).
    case pong = 0xA

    /// Control frames (§5.5): at most 125 bytes and never fragmented.
    var isControl: Bool { rawValue & 0x8 != 0 }
}
