/// A distribution of observations (durations in seconds) in cumulative buckets.
public struct PrometheusHistogram: Sendable {
    let family: MetricFamily

    /// Records one observation.
    public func observe(_ value: Double, _ labels: String...) { family.observe(value, labels: labels) }
}
