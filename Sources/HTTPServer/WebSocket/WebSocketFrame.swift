/// One WebSocket frame (RFC 6455 §5.2), its payload already unmasked.
struct WebSocketFrame: Equatable {
    /// Whether this is the final fragment of its message.
    var fin: Bool
    /// The opcode.
    var opcode: WebSocketOpcode
    /// The payload.
    var payload: [UInt8]

    /// The frame as a server sends it: never masked (§5.1), the length in its shortest form.
    func encoded() -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(payload.count + 10)
        bytes.append((fin ? 0x80 : 0) | opcode.rawValue)
        let count = payload.count
        if count < 126 {
            bytes.append(UInt8(count))
        } else if count <= 0xFFFF {
            bytes.append(126)
            bytes.append(UInt8(count >> 8))
            bytes.append(UInt8(count & 0xFF))
        } else {
            bytes.append(127)
            for shift in stride(from: 56, through: 0, by: -8) {
                bytes.append(UInt8((UInt64(count) >> UInt64(shift)) & 0xFF))
            }
        }
        bytes += payload
        return bytes
    }
}
