/// The server cannot store what was sent right now: the store's disk is (nearly) full, or uploads
/// in progress already use the spool budget. Answered with 507 and Parse code 1 (Retry-After), never
/// a 500, because freeing space cures it and the client should try again.
public struct InsufficientStorage: Error, Equatable, Sendable, CustomStringConvertible {
    /// A sentence for the client saying what ran out.
    public let message: String

    /// An error with the client-facing `message`.
    public init(_ message: String) { self.message = message }

    public var description: String { "insufficient storage: \(message)" }
}
