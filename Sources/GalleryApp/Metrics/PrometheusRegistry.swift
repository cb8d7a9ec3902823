import Foundation
import Prometheus
import Synchronization

/// galleryd's metrics, kept by swift-prometheus 2.x (`PrometheusCollectorRegistry`) and exposed in
/// the Prometheus text format: counters, gauges and histograms with fixed label names, plus gauges
/// read at scrape time (pool size, queue depth). Label values must come from bounded sets (route
/// patterns, not raw paths). `metricsFactory` lets swift-metrics users (libraries, `MetricsSystem`)
/// report into the same registry. docs/decisions/021-metrics-swift-prometheus.md has the
/// measurement behind the switch from the hand-written registry.
public final class PrometheusRegistry: Sendable {
    /// The swift-prometheus registry every family lives in.
    public let collectorRegistry = PrometheusCollectorRegistry()
    private let families = Mutex<[String: PrometheusFamily]>([:])
    private let collectors = Mutex<[@Sendable () -> [PrometheusScrapedFamily]]>([])
    private let folds = Mutex<[@Sendable () -> Void]>([])

    /// An empty registry.
    public init() {}

    /// A swift-metrics factory over this registry, for `MetricsSystem.bootstrap`.
    public var metricsFactory: PrometheusMetricsFactory { PrometheusMetricsFactory(registry: collectorRegistry) }

    /// The counter family with that name, created on first use.
    public func counter(_ name: String, help: String, labels: [String] = []) -> PrometheusCounter {
        PrometheusCounter(family: family(name, help: help, kind: .counter, labels: labels, buckets: []))
    }

    /// The gauge family with that name, created on first use.
    public func gauge(_ name: String, help: String, labels: [String] = []) -> PrometheusGauge {
        PrometheusGauge(family: family(name, help: help, kind: .gauge, labels: labels, buckets: []))
    }

    /// The histogram family with that name and upper bounds (seconds), created on first use.
    public func histogram(
        _ name: String, help: String, labels: [String] = [],
        buckets: [Double] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
    ) -> PrometheusHistogram {
        PrometheusHistogram(
            family: family(name, help: help, kind: .histogram, labels: labels, buckets: buckets.sorted()))
    }

    /// Adds a source of gauges computed at each scrape (for values owned elsewhere, like pool stats).
    public func addCollector(_ collect: @escaping @Sendable () -> [PrometheusScrapedFamily]) {
        collectors.withLock { $0.append(collect) }
    }

    /// Runs `fold` before each render and each read of a value: for counts kept apart (per event
    /// loop) and added to the registry's series when someone looks.
    func beforeEachRead(_ fold: @escaping @Sendable () -> Void) {
        folds.withLock { $0.append(fold) }
    }

    /// Runs every `beforeEachRead` fold.
    func runFolds() {
        for fold in folds.withLock({ $0 }) { fold() }
    }

    private func family(_ name: String, help: String, kind: PrometheusFamily.Kind, labels: [String], buckets: [Double])
        -> PrometheusFamily
    {
        families.withLock { families in
            if let existing = families[name] { return existing }
            let family = PrometheusFamily(
                registry: collectorRegistry, name: name, help: help, kind: kind, labelNames: labels, buckets: buckets,
                beforeRead: { [weak self] in self?.runFolds() })
            families[name] = family
            return family
        }
    }

    /// The exposition text of every metric.
    public func render() -> String {
        runFolds()
        let sources = collectors.withLock { $0 }
        var out = collectorRegistry.emitToString()
        for family in families.withLock({ $0.values.sorted { $0.name < $1.name } }) {
            family.renderHistograms(into: &out)
        }
        for source in sources {
            for metric in source() {
                out += "# HELP \(metric.name) \(metric.help)\n# TYPE \(metric.name) \(metric.type)\n"
                for sample in metric.samples {
                    out +=
                        metric.name + (sample.labels.isEmpty ? "" : "{\(sample.labels)}") + " "
                        + Self.format(sample.value) + "\n"
                }
            }
        }
        return out
    }

    static func format(_ value: Double) -> String {
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        if value == value.rounded() && abs(value) < 1e15 { return String(Int64(value)) }
        return String(value)
    }

    /// Escapes a label value (`\`, `"` and newlines, as the format requires).
    static func escapeLabel(_ value: String) -> String {
        value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
    }
}
