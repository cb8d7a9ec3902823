import Prometheus

/// A value that goes up and down (a swift-prometheus `Gauge` per series).
public struct PrometheusGauge: Sendable {
    let family: PrometheusFamily

    /// Sets the series to `value`.
    public func set(_ value: Double, _ labels: String...) { family.gauge(labels).set(to: value) }

    /// Adds `delta` (may be negative).
    public func add(_ delta: Double, _ labels: String...) {
        let gauge = family.gauge(labels)
        if delta >= 0 { gauge.increment(by: delta) } else { gauge.decrement(by: -delta) }
    }

    /// The current value (tests).
    public func value(_ labels: String...) -> Double { family.value(labels) }
}
