import HTTPServer
import Testing
@testable import GalleryApp

@Test func prometheus_RendersCountersGaugesAndCumulativeHistograms() {
    let registry = PrometheusRegistry()
    let requests = registry.counter("http_requests_total", help: "Requests.", labels: ["route", "status"])
    requests.increment(1, "/a", "200")
    requests.increment(2, "/a", "200")
    requests.increment(1, "/b \"q\"", "404")
    registry.gauge("open_connections", help: "Connections.").set(3)
    let latency = registry.histogram("latency_seconds", help: "Latency.", buckets: [0.1, 1])
    latency.observe(0.05)
    latency.observe(0.5)
    latency.observe(5)
    registry.addCollector { [(name: "pool_in_use", help: "In use.", type: "gauge", samples: [(labels: "", value: 2)])] }
    let text = registry.render()
    #expect(text.contains("# TYPE http_requests_total counter\n"))
    #expect(text.contains("http_requests_total{route=\"/a\",status=\"200\"} 3\n"))
    #expect(text.contains("http_requests_total{route=\"/b \\\"q\\\"\",status=\"404\"} 1\n"))
    // swift-prometheus writes gauge values and bucket bounds as floats (`3.0`, `le="1.0"`).
    #expect(text.contains("open_connections 3.0\n"))
    #expect(text.contains("latency_seconds_bucket{le=\"0.1\"} 1\n"))
    #expect(text.contains("latency_seconds_bucket{le=\"1.0\"} 2\n"))
    #expect(text.contains("latency_seconds_bucket{le=\"+Inf\"} 3\n"))
    #expect(text.contains("latency_seconds_count 3\n"))
    #expect(text.contains("pool_in_use 2\n"))
    #expect(requests.value("/a", "200") == 3)
    #expect(registry.gauge("open_connections", help: "Connections.").value() == 3)
}

@Test func metrics_CountRequestsPerRoute_AndFoldUnknownMethodsIntoOther() {
    let metrics = GalleryMetrics()
    for _ in 0..<3 { metrics.requestFinished(method: .get, routePattern: "/a", status: 200, durationSeconds: 0.002, bytesSent: 10) }
    metrics.requestFinished(method: HTTPMethod(rawValue: "BREW"), routePattern: "unmatched", status: 501, durationSeconds: 0.1, bytesSent: 5)
    metrics.requestFinished(method: HTTPMethod(rawValue: "XYZZY"), routePattern: "unmatched", status: 501, durationSeconds: 0.1, bytesSent: 5)
    #expect(metrics.httpRequests.value("/a", "GET", "200") == 3)
    #expect(metrics.httpRequests.value("unmatched", "other", "501") == 2)
    let text = metrics.registry.render()
    #expect(!text.contains("BREW") && !text.contains("XYZZY"))
    #expect(text.contains("galleryd_http_request_duration_seconds_count{route=\"/a\"} 3\n"))
    #expect(text.contains("galleryd_http_request_duration_seconds_bucket{route=\"/a\",le=\"0.0025\"} 3\n"))
    #expect(text.contains("galleryd_http_response_bytes_total 40\n"))
}
