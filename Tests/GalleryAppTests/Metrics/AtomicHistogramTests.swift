import Foundation
import Testing

@testable import GalleryApp

/// The request histogram counts without a lock (decision 041): observations from many threads at
/// once are each counted exactly once, in the first bucket whose bound is at least the value
/// (a value on a bound counts in it), and the scrape shows cumulative buckets, `+Inf`, sum and count.
@Test func atomicHistogram_CountsEveryObservationFromManyThreads_InCumulativeBuckets() {
    let registry = PrometheusRegistry()
    let latency = registry.histogram("latency_seconds", help: "Latency.", labels: ["route"], buckets: [1, 0.1])
    let series = latency.series("/a \"q\"")
    let perThread = 3_000
    DispatchQueue.concurrentPerform(iterations: 8) { _ in
        for i in 0..<perThread {
            // A third each: below the first bound, on the second bound, above every bound.
            series.observe([0.05, 1, 5][i % 3])
        }
    }
    let third = 8 * perThread / 3
    let text = registry.render()
    #expect(text.contains("# TYPE latency_seconds histogram\n"))
    #expect(text.contains("latency_seconds_bucket{route=\"/a \\\"q\\\"\",le=\"0.1\"} \(third)\n"))
    #expect(text.contains("latency_seconds_bucket{route=\"/a \\\"q\\\"\",le=\"1.0\"} \(2 * third)\n"))
    #expect(text.contains("latency_seconds_bucket{route=\"/a \\\"q\\\"\",le=\"+Inf\"} \(3 * third)\n"))
    #expect(text.contains("latency_seconds_count{route=\"/a \\\"q\\\"\"} \(3 * third)\n"))
    #expect(text.contains("latency_seconds_sum{route=\"/a \\\"q\\\"\"} 48400.0\n"))  // 8,000 × (0.05 + 1 + 5)
}
