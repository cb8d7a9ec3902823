/// A distribution of observations (durations in seconds) in cumulative buckets.
public struct PrometheusHistogram: Sendable {
    let family: MetricFamily

    /// Records one observation.
    public func observe(_ value: Double, _ labels: String...) { family.observe(value, labels: labels) }

    /// One series, looked up once: for code that observes the same series on every request.
    public func series(_ labels: String...) -> Series { Series(family: family, series: family.series(labels: labels)) }

    /// A histogram series resolved ahead of time.
    public struct Series: @unchecked Sendable {
        let family: MetricFamily
        let series: MetricFamily.Series

        /// Records one observation.
        public func observe(_ value: Double) { family.observe(value, in: series) }
    }
}
