/// An upload refused at its head because its user or client address already has as many uploads
/// in progress as `max_uploads_per_user` or `max_uploads_per_address` allow. Answered 429 with
/// Parse code 155 and `Retry-After`: the client sends it again once one of its uploads is done.
public struct TooManyUploads: Error, Equatable, Sendable, CustomStringConvertible {
    /// A sentence for the client saying which cap was reached.
    public let message: String
    /// Seconds the client should wait before trying again.
    public static let retryAfterSeconds = 2

    /// An error with the client-facing `message`.
    public init(_ message: String) { self.message = message }

    public var description: String { "too many uploads: \(message)" }
}
