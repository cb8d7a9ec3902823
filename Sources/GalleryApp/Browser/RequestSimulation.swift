import Foundation
import HTTPServer

/// The client developers' aids: a delay and a share of failures added to requests, so an app can be
/// tried against a slow, flaky server. Server-wide from `simulate_latency_ms` and
/// `simulate_error_rate`, or per request with `X-Gallery-Simulate: latency=800ms; error=0.1`,
/// honoured only with the master key (so no client can slow the server for others).
public struct RequestSimulation: Sendable {
    /// What to simulate for one request.
    public struct Plan: Sendable, Equatable {
        /// Delay before the request is handled, in milliseconds.
        public var latencyMs: Int
        /// Probability of answering with a simulated failure, 0…1.
        public var errorRate: Double

        /// A plan.
        public init(latencyMs: Int, errorRate: Double) {
            self.latencyMs = latencyMs
            self.errorRate = errorRate
        }

        /// Whether it does anything.
        public var isActive: Bool { latencyMs > 0 || errorRate > 0 }
    }

    /// The header a master-key request uses to set its own plan.
    public static let header = "X-Gallery-Simulate"
    /// The longest delay one request may ask for, in milliseconds (a handler thread sleeps through it).
    public static let maxLatencyMs = 60_000

    /// The server-wide plan from the configuration.
    public let configured: Plan
    let keys: KeyChecker

    /// The aids from the configuration; `keys` decides who may use the header.
    public init(latencyMs: Int, errorRate: Double, keys: KeyChecker) {
        configured = Plan(latencyMs: latencyMs, errorRate: errorRate)
        self.keys = keys
    }

    /// The plan for a request: the header's (master key only), else the configured one.
    /// A malformed header from the master key is an error, not silently ignored.
    public func plan(for request: HTTPRequest) throws -> Plan {
        guard let value = request.headers[Self.header], keys.isMaster(request) else { return configured }
        return try Self.parse(value)
    }

    /// Parses `latency=800ms; error=0.1` (either part optional; latency in `ms` or `s`, or a bare
    /// number of milliseconds).
    public static func parse(_ value: String) throws -> Plan {
        var plan = Plan(latencyMs: 0, errorRate: 0)
        for part in value.split(separator: ";") {
            let pair = part.split(separator: "=", maxSplits: 1).map {
                $0.trimmingCharacters(in: .whitespaces).lowercased()
            }
            guard pair.count == 2 else { throw SimulationHeaderError(value: value, reason: "expected name=value") }
            switch pair[0] {
            case "latency":
                var text = pair[1]
                var scale = 1.0
                if text.hasSuffix("ms") {
                    text.removeLast(2)
                } else if text.hasSuffix("s") {
                    text.removeLast()
                    scale = 1000
                }
                guard let number = Double(text), number.isFinite, number >= 0,
                    number * scale <= Double(maxLatencyMs)
                else {
                    throw SimulationHeaderError(value: value, reason: "latency must be 0 to \(maxLatencyMs)ms")
                }
                plan.latencyMs = Int(number * scale)
            case "error":
                guard let rate = Double(pair[1]), rate >= 0, rate <= 1 else {
                    throw SimulationHeaderError(value: value, reason: "error must be a rate from 0 to 1")
                }
                plan.errorRate = rate
            default:
                throw SimulationHeaderError(value: value, reason: "unknown part \(pair[0]) (latency, error)")
            }
        }
        return plan
    }

    /// Carries out a plan: sleeps, then throws `SimulatedFailure` with the plan's probability.
    public func perform(_ plan: Plan) throws {
        if plan.latencyMs > 0 { Thread.sleep(forTimeInterval: Double(plan.latencyMs) / 1000) }
        if plan.errorRate > 0 && Double.random(in: 0..<1) < plan.errorRate { throw SimulatedFailure() }
    }
}
