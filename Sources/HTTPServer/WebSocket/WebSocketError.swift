/// Why the server ends a WebSocket connection: each case names the rule the peer broke and maps
/// to the close code sent (RFC 6455 §7.4.1).
enum WebSocketError: Error, Equatable {
    /// A client frame without the mask bit (§5.1).
    case unmaskedFrame
    /// Reserved bits set without a negotiated extension (§5.2).
    case reservedBits
    /// An opcode §5.2 leaves undefined.
    case unknownOpcode(UInt8)
    /// A control frame with FIN clear or a payload over 125 bytes (§5.5).
    case badControlFrame
    /// A continuation without a message, or a new message inside a fragmented one (§5.4).
    case badFragmentation
    /// A 64-bit length with the top bit set, or a length not in its shortest form (§5.2).
    case badLength
    /// A close frame with a 1-byte payload or a code not allowed on the wire (§5.5.1, §7.4).
    case badClosePayload
    /// A frame larger than `WebSocketLimits.maxFrameBytes`.
    case frameTooBig(UInt64)
    /// A message larger than `WebSocketLimits.maxMessageBytes`.
    case messageTooBig(Int)
    /// A text message or close reason that is not UTF-8 (§8.1).
    case invalidUTF8

    /// The close code that answers the error.
    var closeCode: WebSocketCloseCode {
        switch self {
        case .frameTooBig, .messageTooBig: return .messageTooBig
        case .invalidUTF8: return .invalidPayload
        default: return .protocolError
        }
    }
}
