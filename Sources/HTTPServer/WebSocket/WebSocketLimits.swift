/// Bounds on one WebSocket connection (RFC 6455), each with its default and the reason for it.
public struct WebSocketLimits: Sendable {
    /// The largest payload of one frame. 64 KiB: LiveQuery messages are small JSON; a larger
    /// declared length is refused with 1009 before any of it is buffered.
    public var maxFrameBytes = 64 * 1024
    /// The largest message after reassembling its fragments. 1 MiB: bounds memory per connection.
    public var maxMessageBytes = 1024 * 1024
    /// Bytes queued for a client that does not read before it is dropped (close 1008): a slow
    /// subscriber must not hold unbounded event backlog.
    public var maxOutboundBytes = 4 * 1024 * 1024
    /// Seconds without any frame from the client before the server sends a ping.
    public var pingInterval = 30.0
    /// Seconds to wait for any frame (a pong) after that ping before the connection is dropped.
    public var pongTimeout = 10.0
    /// Seconds to wait for the client's close after the server sent its own.
    public var closeTimeout = 2.0

    /// The defaults.
    public init() {}
}
