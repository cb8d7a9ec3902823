import Foundation
import Synchronization

/// A handle on one upgraded connection, safe to use from any thread: sends hop onto the
/// connection's event loop, and are dropped once the connection has closed.
// @unchecked: `connection` is read and written only on `loop`'s thread; the rest is immutable.
public final class WebSocket: @unchecked Sendable, Hashable {
    /// A number unique within the process, for logs and maps.
    public let id: Int
    /// The peer, as the HTTP layer printed it.
    public let remoteAddress: String
    private let loop: EventLoop
    /// Only read and written on `loop`.
    weak var connection: WebSocketConnection?

    /// The last id handed out.
    private static let lastID = Atomic<Int>(0)

    init(loop: EventLoop, remoteAddress: String) {
        self.loop = loop
        self.remoteAddress = remoteAddress
        id = Self.lastID.add(1, ordering: .relaxed).newValue
    }

    /// Sends a text message.
    public func send(text: String) { send(.text, Array(text.utf8)) }

    /// Sends a binary message.
    public func send(binary: [UInt8]) { send(.binary, binary) }

    /// Starts the closing handshake with `code`.
    public func close(_ code: WebSocketCloseCode = .normalClosure) {
        loop.execute { [weak self] in self?.connection?.closeGracefully(code) }
    }

    private func send(_ opcode: WebSocketOpcode, _ payload: [UInt8]) {
        loop.execute { [weak self] in self?.connection?.sendMessage(opcode, payload) }
    }

    public static func == (a: WebSocket, b: WebSocket) -> Bool { a === b }
    public func hash(into hasher: inout Hasher) { hasher.combine(id) }
}
