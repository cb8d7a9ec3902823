import Foundation
import GalleryApp
import HTTPServer
import Prometheus
import Synchronization

/// The request path's metrics cost: what `GalleryMetrics.requestFinished` costs per request, beside
/// the same work written straight against swift-prometheus 2.x (a series cached per route, method
/// and status; counter, duration histogram, bytes counter), which is what GalleryMetrics' wrappers
/// add. Before the switch the first column measured the hand-written registry
/// (docs/decisions/021-metrics-swift-prometheus.md).
/// Prints nanoseconds per request for 1 and 2 threads. Usage: galleryd-bench metrics [--requests N]
enum MetricsBench {
    static func run(_ arguments: [String]) {
        var requests = 2_000_000
        if let index = arguments.firstIndex(of: "--requests"), index + 1 < arguments.count {
            requests = Int(arguments[index + 1]) ?? requests
        }
        let routes = ["/parse/classes/:className", "/parse/classes/:className/:objectId", "/bucket/*", "/health"]
        let statuses = [200, 200, 200, 404]
        for threads in [1, 2] {
            for round in 1...3 {
                let gallery = GalleryMetrics()
                let galleryNs = measure(threads: threads, requests: requests) { i in
                    gallery.requestFinished(
                        method: .get, routePattern: routes[i & 3], status: statuses[(i >> 2) & 3],
                        durationSeconds: Double(i & 1023) / 100_000, bytesSent: 2048)
                }
                let library = LibraryMetrics()
                let libraryNs = measure(threads: threads, requests: requests) { i in
                    library.requestFinished(
                        method: "GET", routePattern: routes[i & 3], status: statuses[(i >> 2) & 3],
                        durationSeconds: Double(i & 1023) / 100_000, bytesSent: 2048)
                }
                print(
                    String(
                        format:
                            "metrics: threads=%d round=%d GalleryMetrics %.1f ns/request, swift-prometheus direct %.1f ns/request",
                        threads, round, galleryNs, libraryNs))
            }
        }
    }

    /// Nanoseconds per call of `body` over `requests` calls split across `threads` threads.
    private static func measure(threads: Int, requests: Int, _ body: @escaping @Sendable (Int) -> Void) -> Double {
        let group = DispatchGroup()
        let start = DispatchTime.now().uptimeNanoseconds
        for t in 0..<threads {
            group.enter()
            Thread {
                var i = t
                while i < requests {
                    body(i)
                    i += threads
                }
                group.leave()
            }.start()
        }
        group.wait()
        return Double(DispatchTime.now().uptimeNanoseconds - start) / Double(requests) * Double(threads)
    }

    /// GalleryMetrics' request path written against swift-prometheus.
    final class LibraryMetrics: Sendable {
        let registry = PrometheusCollectorRegistry()
        let bytes: Counter
        private let series = Mutex<[Key: (Counter, ValueHistogram)]>([:])

        /// The same cache key GalleryMetrics uses, so only the registries differ.
        private struct Key: Hashable {
            let route: String
            let method: String
            let status: Int
        }
        private let buckets: [Double] = [
            0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
        ]

        init() {
            bytes = registry.makeCounter(
                descriptor: MetricNameDescriptor(
                    metricName: "galleryd_http_response_bytes_total", unitName: "",
                    helpText: "Response body bytes sent."))
        }

        func requestFinished(method: String, routePattern: String, status: Int, durationSeconds: Double, bytesSent: Int)
        {
            let key = Key(route: routePattern, method: method, status: status)
            let entry = series.withLock { series in
                if let found = series[key] { return found }
                let made = (
                    registry.makeCounter(
                        descriptor: MetricNameDescriptor(
                            metricName: "galleryd_http_requests_total", unitName: "",
                            helpText: "HTTP requests by route pattern, method and status."),
                        labels: [("route", routePattern), ("method", method), ("status", String(status))]),
                    registry.makeValueHistogram(
                        descriptor: MetricNameDescriptor(
                            metricName: "galleryd_http_request_duration_seconds", unitName: "",
                            helpText: "HTTP request duration by route pattern."),
                        labels: [("route", routePattern)], buckets: buckets)
                )
                series[key] = made
                return made
            }
            entry.0.increment()
            entry.1.record(durationSeconds)
            bytes.increment(by: Int64(bytesSent))
        }
    }
}
