/// What an application does with one upgraded WebSocket connection. Every call arrives on the
/// connection's event loop, one at a time: it must not block (hop to a queue for database work).
/// No thread is held between calls.
public protocol WebSocketHandler: AnyObject, Sendable {
    /// The handshake is done; `socket` may be kept and used from any thread.
    func opened(_ socket: WebSocket)
    /// A whole text message (reassembled, valid UTF-8).
    func received(text: String, on socket: WebSocket)
    /// A whole binary message.
    func received(binary: [UInt8], on socket: WebSocket)
    /// The connection is gone (close frame, error, timeout or shutdown), with the code it closed with.
    func closed(_ socket: WebSocket, code: WebSocketCloseCode)
}
