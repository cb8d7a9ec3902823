/// The display sizes' metrics: renders (what single-flight keeps at one per photo and size),
/// the cache's bytes against `size_cache_bytes`, and evictions.
struct SizeMetrics: Sendable {
    /// Renditions rendered, by size.
    let renders: PrometheusCounter
    /// Bytes of renditions listed in the cache.
    let cacheBytes: PrometheusGauge
    /// Renditions removed to stay within `size_cache_bytes`.
    let evictions: PrometheusCounter

    /// Registers the metrics in `registry`.
    init(registry: PrometheusRegistry) {
        renders = registry.counter(
            "galleryd_size_renders_total", help: "Display sizes rendered on first request, by size.", labels: ["size"])
        for size in DisplaySize.rendered { _ = renders.series(size.rawValue) }
        cacheBytes = registry.gauge(
            "galleryd_size_cache_bytes", help: "Bytes of rendered display sizes kept (size_cache_bytes bounds it).")
        evictions = registry.counter(
            "galleryd_size_cache_evictions_total",
            help: "Rendered display sizes removed, least recently used first, to stay within size_cache_bytes.")
        _ = evictions.series()
    }
}
