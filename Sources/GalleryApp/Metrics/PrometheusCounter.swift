/// A monotonically increasing count, optionally split by label values.
public struct PrometheusCounter: Sendable {
    let family: MetricFamily

    /// Adds `amount` (default 1) to the series with these label values (in the family's label order).
    public func increment(_ amount: Double = 1, _ labels: String...) { family.add(amount, labels: labels) }

    /// The current value of a series (tests).
    public func value(_ labels: String...) -> Double { family.value(labels: labels) }

    /// One series, looked up once: for code that counts the same series on every request.
    public func series(_ labels: String...) -> Series { Series(family: family, series: family.series(labels: labels)) }

    /// A counter series resolved ahead of time.
    public struct Series: @unchecked Sendable {
        let family: MetricFamily
        let series: MetricFamily.Series

        /// Adds `amount` (default 1).
        public func increment(_ amount: Double = 1) { family.add(amount, to: series) }
    }
}
