/// A malformed `X-Gallery-Simulate` header (answered 400 in the route's error format).
public struct SimulationHeaderError: Error, CustomStringConvertible {
    /// The header as sent.
    public let value: String
    /// What is wrong with it.
    public let reason: String

    public var description: String { "X-Gallery-Simulate: \(reason)" }
}
