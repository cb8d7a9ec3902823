/// A value that goes up and down.
public struct PrometheusGauge: Sendable {
    let family: MetricFamily

    /// Sets the series to `value`.
    public func set(_ value: Double, _ labels: String...) { family.set(value, labels: labels) }

    /// Adds `delta` (may be negative).
    public func add(_ delta: Double, _ labels: String...) { family.add(delta, labels: labels) }

    /// The current value (tests).
    public func value(_ labels: String...) -> Double { family.value(labels: labels) }
}
