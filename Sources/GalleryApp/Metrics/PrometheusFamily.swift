import Foundation
import Prometheus
import Synchronization

/// One named metric of a `PrometheusRegistry`: its swift-prometheus descriptor, label names and
/// buckets, and the series made so far (one swift-prometheus collector per set of label values,
/// looked up here so a label-value call does not build label tuples each time).
final class PrometheusFamily: Sendable {
    /// What kind of collector the family makes.
    enum Kind: Sendable { case counter, gauge, histogram }

    /// The metric name, as scraped.
    let name: String
    /// Counter, gauge or histogram.
    let kind: Kind
    /// The label names, in the order callers give values.
    let labelNames: [String]
    /// Histogram upper bounds (empty for the others).
    let buckets: [Double]
    private let registry: PrometheusCollectorRegistry
    /// The HELP text.
    private let help: String
    /// Runs the registry's folds, so a value read back includes counts kept apart (per loop).
    private let beforeRead: @Sendable () -> Void
    /// The series made so far, by label values, under the mutex.
    private let series = Mutex(Series())

    /// What `series` guards.
    private struct Series {
        var counters: [[String]: Counter] = [:]
        var gauges: [[String]: Gauge] = [:]
        /// Histograms are galleryd's own (`AtomicHistogram`), rendered by `renderHistograms`.
        var histograms: [[String]: AtomicHistogram] = [:]
    }

    /// A family in `registry`; one without labels registers its single series at once.
    init(
        registry: PrometheusCollectorRegistry, name: String, help: String, kind: Kind, labelNames: [String],
        buckets: [Double], beforeRead: @escaping @Sendable () -> Void = {}
    ) {
        self.beforeRead = beforeRead
        self.registry = registry
        self.name = name
        self.kind = kind
        self.labelNames = labelNames
        self.buckets = buckets
        self.help = help
        // A family without labels has its one series from the start, so a scrape shows it at 0.
        if labelNames.isEmpty {
            switch kind {
            case .counter: _ = counter([])
            case .gauge: _ = gauge([])
            case .histogram: _ = histogram([])
            }
        }
    }

    /// swift-prometheus' name and help (made when a series is, as swift-prometheus does not mark it Sendable).
    private var descriptor: MetricNameDescriptor {
        MetricNameDescriptor(metricName: name, unitName: "", helpText: help)
    }

    private func labels(_ values: [String]) -> [(String, String)] {
        precondition(values.count == labelNames.count, "\(name) takes \(labelNames.count) label values")
        return Array(zip(labelNames, values))
    }

    /// The counter series with these label values, created on first use.
    func counter(_ values: [String]) -> Counter {
        series.withLock { series in
            if let existing = series.counters[values] { return existing }
            let made =
                labelNames.isEmpty
                ? registry.makeCounter(descriptor: descriptor)
                : registry.makeCounter(descriptor: descriptor, labels: labels(values))
            series.counters[values] = made
            return made
        }
    }

    /// The gauge series with these label values, created on first use.
    func gauge(_ values: [String]) -> Gauge {
        series.withLock { series in
            if let existing = series.gauges[values] { return existing }
            let made =
                labelNames.isEmpty
                ? registry.makeGauge(descriptor: descriptor)
                : registry.makeGauge(descriptor: descriptor, labels: labels(values))
            series.gauges[values] = made
            return made
        }
    }

    /// The histogram series with these label values, created on first use.
    func histogram(_ values: [String]) -> AtomicHistogram {
        precondition(values.count == labelNames.count, "\(name) takes \(labelNames.count) label values")
        return series.withLock { series in
            if let existing = series.histograms[values] { return existing }
            let made = AtomicHistogram(bounds: buckets)
            series.histograms[values] = made
            return made
        }
    }

    /// A histogram family in the Prometheus text format: HELP, TYPE, then each series (in the
    /// order of their label values, so scrapes list them alike); nothing for other kinds.
    func renderHistograms(into out: inout String) {
        guard kind == .histogram else { return }
        let made = series.withLock { $0.histograms }
        out += "# HELP \(name) \(help)\n# TYPE \(name) histogram\n"
        for (values, histogram) in made.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
            let labels = zip(labelNames, values).map { "\($0)=\"\(PrometheusRegistry.escapeLabel($1))\"" }
            histogram.render(name: name, labels: labels.joined(separator: ","), into: &out)
        }
    }

    /// The current value of a counter or gauge series, read back from the exposition text (tests
    /// and diagnostics only: swift-prometheus keeps values private); 0 for a series never made.
    func value(_ values: [String]) -> Double {
        beforeRead()
        var prefix = name
        if !labelNames.isEmpty {
            prefix +=
                "{"
                + zip(labelNames, values).map { "\($0)=\"\(PrometheusRegistry.escapeLabel($1))\"" }.joined(
                    separator: ",") + "}"
        }
        prefix += " "
        for line in registry.emitToString().split(separator: "\n") where line.hasPrefix(prefix) {
            return Double(line.dropFirst(prefix.count)) ?? 0
        }
        return 0
    }
}

extension Counter {
    /// Adds `amount`: whole amounts on the integer side, so the exposition shows `40`, not `40.0`.
    func add(_ amount: Double) {
        if amount == amount.rounded(), amount >= 0, amount < 9.0e15 {
            increment(by: Int64(amount))
        } else {
            increment(by: amount)
        }
    }
}
