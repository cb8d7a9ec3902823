/// A close status code (RFC 6455 §7.4.1). An open set, like HTTP statuses.
public struct WebSocketCloseCode: RawRepresentable, Hashable, Sendable {
    /// The code on the wire.
    public let rawValue: UInt16
    /// A code.
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// 1000: the purpose is fulfilled.
    public static let normalClosure = WebSocketCloseCode(rawValue: 1000)
    /// 1001: the server is going down (or the client navigates away).
    public static let goingAway = WebSocketCloseCode(rawValue: 1001)
    /// 1002: the peer broke the framing rules (unmasked frame, fragmented control frame …).
    public static let protocolError = WebSocketCloseCode(rawValue: 1002)
    /// 1003: a data type the endpoint does not accept.
    public static let unsupportedData = WebSocketCloseCode(rawValue: 1003)
    /// 1007: a text message (or close reason) that is not valid UTF-8.
    public static let invalidPayload = WebSocketCloseCode(rawValue: 1007)
    /// 1008: a policy was violated (e.g. the client does not read its events).
    public static let policyViolation = WebSocketCloseCode(rawValue: 1008)
    /// 1009: a frame or message over the limits.
    public static let messageTooBig = WebSocketCloseCode(rawValue: 1009)
    /// 1011: the server failed unexpectedly.
    public static let internalError = WebSocketCloseCode(rawValue: 1011)

    /// Whether a peer may send this code in a close frame (§7.4.1, §7.4.2): 1000–1003, 1007–1011,
    /// and 3000–4999; never 1004–1006, 1015 or anything outside those ranges.
    var isValidOnWire: Bool {
        switch rawValue {
        case 1000...1003, 1007...1011, 3000...4999: return true
        default: return false
        }
    }
}
