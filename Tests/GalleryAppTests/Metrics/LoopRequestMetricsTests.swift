import Foundation
import HTTPServer
import Testing

@testable import GalleryApp

/// The value of one exposition line (`name{labels} value`), or nil when the scrape has no such line.
private func sample(_ text: String, _ series: String) -> Int? {
    for line in text.split(separator: "\n") where line.hasPrefix(series + " ") {
        return Int(line.dropFirst(series.count + 1))
    }
    return nil
}

/// Each event loop counts apart (decision 041, round 8); `/metrics` is their sum at every scrape,
/// a scrape adds nothing by itself, and counts only grow — also beside the shared path.
@Test func metrics_ScrapeSumsEveryLoopsCounts_AndStaysMonotonic() {
    let metrics = GalleryMetrics()
    // Each used by one thread at a time, as a loop uses its own (`LoopRequestMetrics` is Sendable for the fold).
    let loops = (0..<4).map { _ in metrics.makeLoopRecorder() as! LoopRequestMetrics }
    let requests = "galleryd_http_requests_total{route=\"/a\",method=\"GET\",status=\"200\"}"
    let notFound = "galleryd_http_requests_total{route=\"/b\",method=\"other\",status=\"404\"}"
    let count = "galleryd_http_request_duration_seconds_count{route=\"/a\"}"
    let fast = "galleryd_http_request_duration_seconds_bucket{route=\"/a\",le=\"0.0005\"}"
    let bytes = "galleryd_http_response_bytes_total"

    // Every loop on its own thread, as the server runs them, alternating keys so each loop's
    // last-series shortcut both hits and misses.
    DispatchQueue.concurrentPerform(iterations: loops.count) { index in
        for i in 0..<1_000 {
            if i % 5 == 0 {
                loops[index].requestFinished(
                    method: HTTPMethod(rawValue: "BREW"), routePattern: "/b", status: 404, nanoseconds: 2_000_000,
                    bytesSent: 1)
            } else {
                loops[index].requestFinished(
                    method: .get, routePattern: "/a", status: 200, nanoseconds: i % 2 == 0 ? 100_000 : 3_000_000,
                    bytesSent: 10)
            }
        }
    }
    let first = metrics.registry.render()
    #expect(sample(first, requests) == 3_200)
    #expect(sample(first, notFound) == 800)
    #expect(sample(first, count) == 3_200)
    #expect(sample(first, fast) == 1_600)
    #expect(sample(first, bytes) == 4 * (800 * 10 + 200))
    // 4 loops × (400 × 0.1 ms + 400 × 3 ms).
    #expect(first.contains("galleryd_http_request_duration_seconds_sum{route=\"/a\"} 4.96\n"))

    // A second scrape with nothing new reads the same: a loop's counts are added once.
    let second = metrics.registry.render()
    for series in [requests, notFound, count, fast, bytes] { #expect(sample(second, series) == sample(first, series)) }

    // More on two loops and on the shared path; the value read back folds them in too.
    loops[1].requestFinished(method: .get, routePattern: "/a", status: 200, nanoseconds: 1, bytesSent: 5)
    loops[3].requestFinished(method: .get, routePattern: "/a", status: 200, nanoseconds: 1, bytesSent: 5)
    metrics.requestFinished(method: .get, routePattern: "/a", status: 200, durationSeconds: 0.0001, bytesSent: 5)
    #expect(metrics.httpRequests.value("/a", "GET", "200") == 3_203)
    let third = metrics.registry.render()
    #expect(sample(third, requests) == 3_203)
    #expect(sample(third, fast) == 1_603)
    #expect(sample(third, bytes) == 4 * (800 * 10 + 200) + 15)

    // A loop made later (a server started again) adds to the same series.
    let later = metrics.makeLoopRecorder()
    later.requestFinished(method: .get, routePattern: "/a", status: 200, nanoseconds: 10_000_000_000, bytesSent: 0)
    let fourth = metrics.registry.render()
    #expect(sample(fourth, requests) == 3_204)
    #expect(sample(fourth, "galleryd_http_request_duration_seconds_bucket{route=\"/a\",le=\"10.0\"}") == 3_204)
    #expect(sample(fourth, "galleryd_http_request_duration_seconds_bucket{route=\"/a\",le=\"5.0\"}") == 3_203)
}
