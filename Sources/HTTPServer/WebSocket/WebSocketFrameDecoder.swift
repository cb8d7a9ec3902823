/// Cuts client frames out of received bytes (RFC 6455 §5.2) and checks the rules that can be
/// checked on one frame: masking (§5.1), reserved bits, opcodes, control frames (§5.5), the
/// length's encoding and the frame size limit, before any payload is buffered.
struct WebSocketFrameDecoder {
    /// The limits applied.
    let limits: WebSocketLimits

    /// The first whole frame in `input` and the bytes it used, or nil when more bytes are needed.
    func next(_ input: UnsafeRawBufferPointer) throws -> (frame: WebSocketFrame, consumed: Int)? {
        guard input.count >= 2 else { return nil }
        let first = input[0]
        let second = input[1]
        // §5.2: RSV1-3 must be 0 unless an extension was negotiated (none is).
        guard first & 0x70 == 0 else { throw WebSocketError.reservedBits }
        guard let opcode = WebSocketOpcode(rawValue: first & 0x0F) else {
            throw WebSocketError.unknownOpcode(first & 0x0F)
        }
        let fin = first & 0x80 != 0
        // §5.1: a server MUST close the connection on an unmasked client frame.
        guard second & 0x80 != 0 else { throw WebSocketError.unmaskedFrame }
        var length = UInt64(second & 0x7F)
        var offset = 2
        if length == 126 {
            guard input.count >= 4 else { return nil }
            length = UInt64(input[2]) << 8 | UInt64(input[3])
            guard length >= 126 else { throw WebSocketError.badLength }
            offset = 4
        } else if length == 127 {
            guard input.count >= 10 else { return nil }
            length = 0
            for i in 2..<10 { length = length << 8 | UInt64(input[i]) }
            // §5.2: the most significant bit MUST be 0.
            guard length >> 63 == 0, length > 0xFFFF else { throw WebSocketError.badLength }
            offset = 10
        }
        // §5.5: control frames carry at most 125 bytes and are never fragmented.
        if opcode.isControl && (!fin || length > 125) { throw WebSocketError.badControlFrame }
        guard length <= UInt64(limits.maxFrameBytes) else { throw WebSocketError.frameTooBig(length) }
        guard input.count >= offset + 4 + Int(length) else { return nil }
        let mask = (input[offset], input[offset + 1], input[offset + 2], input[offset + 3])
        offset += 4
        var payload = [UInt8](repeating: 0, count: Int(length))
        for i in 0..<Int(length) {
            let key: UInt8
            switch i & 3 {
            case 0: key = mask.0
            case 1: key = mask.1
            case 2: key = mask.2
            default: key = mask.3
            }
            payload[i] = input[offset + i] ^ key
        }
        return (WebSocketFrame(fin: fin, opcode: opcode, payload: payload), offset + Int(length))
    }
}
