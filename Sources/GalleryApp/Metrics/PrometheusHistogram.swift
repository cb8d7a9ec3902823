/// A distribution of observations (durations in seconds) in cumulative buckets: an
/// `AtomicHistogram` per series, observed without a lock.
public struct PrometheusHistogram: Sendable {
    let family: PrometheusFamily

    /// Records one observation.
    public func observe(_ value: Double, _ labels: String...) { family.histogram(labels).observe(value) }

    /// One series, looked up once: for code that observes the same series on every request.
    public func series(_ labels: String...) -> Series { Series(histogram: family.histogram(labels)) }

    /// A histogram series resolved ahead of time.
    public struct Series: Sendable {
        let histogram: AtomicHistogram

        /// Records one observation.
        public func observe(_ value: Double) { histogram.observe(value) }
    }
}
