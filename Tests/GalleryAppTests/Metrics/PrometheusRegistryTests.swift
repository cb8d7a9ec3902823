import Foundation
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
    registry.addCollector { [PrometheusScrapedFamily("pool_in_use", help: "In use.", type: "gauge", value: 2)] }
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
    for _ in 0..<3 {
        metrics.requestFinished(method: .get, routePattern: "/a", status: 200, durationSeconds: 0.002, bytesSent: 10)
    }
    metrics.requestFinished(
        method: HTTPMethod(rawValue: "BREW"), routePattern: "unmatched", status: 501, durationSeconds: 0.1, bytesSent: 5
    )
    metrics.requestFinished(
        method: HTTPMethod(rawValue: "XYZZY"), routePattern: "unmatched", status: 501, durationSeconds: 0.1,
        bytesSent: 5)
    #expect(metrics.httpRequests.value("/a", "GET", "200") == 3)
    #expect(metrics.httpRequests.value("unmatched", "other", "501") == 2)
    let text = metrics.registry.render()
    #expect(!text.contains("BREW") && !text.contains("XYZZY"))
    #expect(text.contains("galleryd_http_request_duration_seconds_count{route=\"/a\"} 3\n"))
    #expect(text.contains("galleryd_http_request_duration_seconds_bucket{route=\"/a\",le=\"0.0025\"} 3\n"))
    #expect(text.contains("galleryd_http_response_bytes_total 40\n"))
}

/// The per-thread last-series shortcut (#17): every request counted once, from many threads at
/// once, alternating routes and statuses so the shortcut both hits and misses.
@Test func metrics_CountEveryRequest_FromManyThreads_AcrossRoutesAndStatuses() {
    let metrics = GalleryMetrics()
    let perThread = 2_000
    DispatchQueue.concurrentPerform(iterations: 8) { thread in
        for i in 0..<perThread {
            let route = i % 10 == 0 ? "/b" : "/a"
            let status = i % 7 == 0 ? 404 : 200
            let method: HTTPMethod = thread % 2 == 0 ? .get : .head
            metrics.requestFinished(
                method: method, routePattern: route, status: status, durationSeconds: 0.002, bytesSent: 3)
        }
    }
    var total = 0.0
    for route in ["/a", "/b"] {
        for method in ["GET", "HEAD"] {
            for status in ["200", "404"] { total += metrics.httpRequests.value(route, method, status) }
        }
    }
    #expect(total == Double(8 * perThread))
    // Exact per series too: of each thread's 2,000, i % 10 == 0 and i % 7 != 0 is 171 (…/b, 200).
    let bOK = (0..<perThread).filter { $0 % 10 == 0 && $0 % 7 != 0 }.count
    #expect(metrics.httpRequests.value("/b", "GET", "200") == Double(4 * bOK))
    #expect(metrics.httpRequests.value("/b", "HEAD", "200") == Double(4 * bOK))
    let text = metrics.registry.render()
    let aCount = (0..<perThread).filter { $0 % 10 != 0 }.count * 8
    #expect(text.contains("galleryd_http_request_duration_seconds_count{route=\"/a\"} \(aCount)\n"))
    #expect(text.contains("galleryd_http_response_bytes_total \(3 * 8 * perThread)\n"))
}

/// A thread's remembered series belong to one `GalleryMetrics`: another instance on the same
/// thread (also one made after the first is gone) counts into its own registry, never the other's.
@Test func metrics_InstancesOnOneThread_KeepTheirOwnCounts() {
    let first = GalleryMetrics()
    let second = GalleryMetrics()
    for _ in 0..<3 {
        first.requestFinished(method: .get, routePattern: "/a", status: 200, durationSeconds: 0.001, bytesSent: 1)
        second.requestFinished(method: .get, routePattern: "/a", status: 200, durationSeconds: 0.001, bytesSent: 1)
    }
    second.requestFinished(method: .get, routePattern: "/a", status: 200, durationSeconds: 0.001, bytesSent: 1)
    #expect(first.httpRequests.value("/a", "GET", "200") == 3)
    #expect(second.httpRequests.value("/a", "GET", "200") == 4)
    for _ in 0..<5 {
        let fresh = GalleryMetrics()
        fresh.requestFinished(method: .get, routePattern: "/a", status: 200, durationSeconds: 0.001, bytesSent: 1)
        #expect(fresh.httpRequests.value("/a", "GET", "200") == 1)
    }
    #expect(second.httpRequests.value("/a", "GET", "200") == 4)
}
