/// An `error` message of the LiveQuery protocol: a code and a human message, sent to the client
/// instead of the answer it asked for. The connection stays open.
public struct LiveQueryError: Error, Equatable, Sendable {
    /// The code (Parse Server's LiveQuery codes where it has one).
    public var code: Int
    /// What was wrong, for the developer.
    public var message: String

    /// An error with its code and message.
    public init(_ code: Int, _ message: String) {
        self.code = code
        self.message = message
    }

    /// 1: the message is not JSON, or lacks a field the operation needs (Parse Server: schema validation).
    static func badMessage(_ message: String) -> LiveQueryError { LiveQueryError(1, message) }
    /// 2: `subscribe` before `connect`, or an unknown subscription (Parse Server uses 2 for these).
    static func notConnected() -> LiveQueryError {
        LiveQueryError(2, "Can not find this client, make sure you connect to server before subscribing")
    }
    /// 4: the keys of `connect` do not match (Parse Server's "Key in request is not valid").
    static func badKeys() -> LiveQueryError { LiveQueryError(4, "Key in request is not valid") }
    /// A `sessionToken` no live session has (Parse's 209).
    static func invalidSessionToken() -> LiveQueryError { LiveQueryError(209, "Invalid session token") }
    /// 102 (Parse's INVALID_QUERY): a class, field or operator that live queries cannot evaluate.
    static func invalidQuery(_ message: String) -> LiveQueryError { LiveQueryError(102, message) }
}
