import Foundation

/// Metrics in the Prometheus text exposition format (version 0.0.4), kept by hand: counters,
/// gauges and histograms with fixed label names, plus gauges read at scrape time (pool size,
/// queue depth). Label values must come from bounded sets (route patterns, not raw paths).
public final class PrometheusRegistry: @unchecked Sendable {
    private let lock = NSLock()
    private var families: [String: MetricFamily] = [:]
    private var order: [String] = []
    private var collectors: [@Sendable () -> [(name: String, help: String, type: String, samples: [(labels: String, value: Double)])]] = []

    /// An empty registry.
    public init() {}

    /// The counter family with that name, created on first use.
    public func counter(_ name: String, help: String, labels: [String] = []) -> PrometheusCounter {
        PrometheusCounter(family: family(name, help: help, type: "counter", labels: labels, buckets: []))
    }

    /// The gauge family with that name, created on first use.
    public func gauge(_ name: String, help: String, labels: [String] = []) -> PrometheusGauge {
        PrometheusGauge(family: family(name, help: help, type: "gauge", labels: labels, buckets: []))
    }

    /// The histogram family with that name and upper bounds (seconds), created on first use.
    public func histogram(
        _ name: String, help: String, labels: [String] = [],
        buckets: [Double] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
    ) -> PrometheusHistogram {
        PrometheusHistogram(family: family(name, help: help, type: "histogram", labels: labels, buckets: buckets.sorted()))
    }

    /// Adds a source of gauges computed at each scrape (for values owned elsewhere, like pool stats).
    public func addCollector(
        _ collect: @escaping @Sendable () -> [(name: String, help: String, type: String, samples: [(labels: String, value: Double)])]
    ) {
        lock.lock()
        collectors.append(collect)
        lock.unlock()
    }

    private func family(_ name: String, help: String, type: String, labels: [String], buckets: [Double]) -> MetricFamily {
        lock.lock()
        defer { lock.unlock() }
        if let existing = families[name] { return existing }
        let family = MetricFamily(name: name, help: help, type: type, labelNames: labels, buckets: buckets)
        families[name] = family
        order.append(name)
        return family
    }

    /// The exposition text of every metric.
    public func render() -> String {
        lock.lock()
        let current = order.compactMap { families[$0] }
        let sources = collectors
        lock.unlock()
        var out = ""
        for family in current { family.render(into: &out) }
        for source in sources {
            for metric in source() {
                out += "# HELP \(metric.name) \(metric.help)\n# TYPE \(metric.name) \(metric.type)\n"
                for sample in metric.samples {
                    out += metric.name + (sample.labels.isEmpty ? "" : "{\(sample.labels)}") + " " + Self.format(sample.value) + "\n"
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

/// One named metric and its labelled series.
final class MetricFamily: @unchecked Sendable {
    /// One labelled series: a value (counters, gauges) or bucket counts (histograms). Only touched
    /// under its family's lock; handles keep it so a hot path skips hashing the labels.
    final class Series {
        var value: Double = 0
        var counts: [UInt64]
        var sum: Double = 0
        var count: UInt64 = 0

        init(buckets: Int) { counts = [UInt64](repeating: 0, count: buckets) }
    }

    let name: String
    let help: String
    let type: String
    let labelNames: [String]
    let buckets: [Double]
    private let lock = NSLock()
    private var series: [[String]: Series] = [:]

    init(name: String, help: String, type: String, labelNames: [String], buckets: [Double]) {
        self.name = name
        self.help = help
        self.type = type
        self.labelNames = labelNames
        self.buckets = buckets
    }

    /// The series with these label values, created on first use.
    func series(labels: [String]) -> Series {
        lock.lock()
        defer { lock.unlock() }
        return seriesLocked(labels)
    }

    private func seriesLocked(_ labels: [String]) -> Series {
        if let existing = series[labels] { return existing }
        let created = Series(buckets: buckets.count)
        series[labels] = created
        return created
    }

    func add(_ delta: Double, labels: [String]) {
        lock.lock()
        seriesLocked(labels).value += delta
        lock.unlock()
    }

    func add(_ delta: Double, to target: Series) {
        lock.lock()
        target.value += delta
        lock.unlock()
    }

    func set(_ value: Double, labels: [String]) {
        lock.lock()
        seriesLocked(labels).value = value
        lock.unlock()
    }

    func value(labels: [String]) -> Double {
        lock.lock()
        defer { lock.unlock() }
        return series[labels]?.value ?? 0
    }

    func observe(_ value: Double, labels: [String]) {
        lock.lock()
        record(value, in: seriesLocked(labels))
        lock.unlock()
    }

    func observe(_ value: Double, in target: Series) {
        lock.lock()
        record(value, in: target)
        lock.unlock()
    }

    private func record(_ value: Double, in target: Series) {
        if let index = buckets.firstIndex(where: { value <= $0 }) { target.counts[index] += 1 }
        target.sum += value
        target.count += 1
    }

    private func labelText(_ values: [String], extra: String? = nil) -> String {
        var parts = zip(labelNames, values).map { "\($0)=\"\(PrometheusRegistry.escapeLabel($1))\"" }
        if let extra { parts.append(extra) }
        return parts.isEmpty ? "" : "{" + parts.joined(separator: ",") + "}"
    }

    func render(into out: inout String) {
        lock.lock()
        defer { lock.unlock() }
        out += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
        let labelled = series.keys.sorted(by: { $0.lexicographicallyPrecedes($1) })
        if type == "histogram" {
            for labels in labelled {
                let h = series[labels]!
                var cumulative: UInt64 = 0
                for (index, bound) in buckets.enumerated() {
                    cumulative += h.counts[index]
                    out += "\(name)_bucket\(labelText(labels, extra: "le=\"\(PrometheusRegistry.format(bound))\"")) \(cumulative)\n"
                }
                out += "\(name)_bucket\(labelText(labels, extra: "le=\"+Inf\"")) \(h.count)\n"
                out += "\(name)_sum\(labelText(labels)) \(h.sum)\n"
                out += "\(name)_count\(labelText(labels)) \(h.count)\n"
            }
        } else {
            if series.isEmpty && labelNames.isEmpty { out += "\(name) 0\n" }
            for labels in labelled {
                out += "\(name)\(labelText(labels)) \(PrometheusRegistry.format(series[labels]!.value))\n"
            }
        }
    }
}
