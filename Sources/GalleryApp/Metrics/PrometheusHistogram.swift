import Prometheus

/// A distribution of observations (durations in seconds) in cumulative buckets (a swift-prometheus
/// `ValueHistogram` per series).
public struct PrometheusHistogram: Sendable {
    let family: PrometheusFamily

    /// Records one observation.
    public func observe(_ value: Double, _ labels: String...) { family.histogram(labels).record(value) }

    /// One series, looked up once: for code that observes the same series on every request.
    public func series(_ labels: String...) -> Series { Series(histogram: family.histogram(labels)) }

    /// A histogram series resolved ahead of time.
    public struct Series: Sendable {
        let histogram: ValueHistogram

        /// Records one observation.
        public func observe(_ value: Double) { histogram.record(value) }
    }
}
