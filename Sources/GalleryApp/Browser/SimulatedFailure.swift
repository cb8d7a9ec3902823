/// The failure a simulation injects: answered 503 with `Retry-After`, like a real overload, so
/// clients exercise their retry paths.
public struct SimulatedFailure: Error, CustomStringConvertible {
    public var description: String { "simulated failure (X-Gallery-Simulate or simulate_error_rate)" }
}
