import Prometheus

/// A monotonically increasing count, optionally split by label values (a swift-prometheus
/// `Counter` per series).
public struct PrometheusCounter: Sendable {
    let family: PrometheusFamily

    /// Adds `amount` (default 1) to the series with these label values (in the family's label order).
    public func increment(_ amount: Double = 1, _ labels: String...) { family.counter(labels).add(amount) }

    /// The current value of a series (tests).
    public func value(_ labels: String...) -> Double { family.value(labels) }

    /// One series, looked up once: for code that counts the same series on every request.
    public func series(_ labels: String...) -> Series { Series(counter: family.counter(labels)) }

    /// A counter series resolved ahead of time.
    public struct Series: Sendable {
        let counter: Counter

        /// Adds `amount` (default 1).
        public func increment(_ amount: Double = 1) { counter.add(amount) }

        /// Adds a whole `amount` (at least 0) on the integer side, with no check for a fraction: what
        /// the per-request counts add (decision 041, round 7).
        public func increment(by amount: Int) { counter.increment(by: Int64(max(0, amount))) }
    }
}
