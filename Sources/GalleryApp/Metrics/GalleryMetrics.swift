import Foundation
import HTTPServer

/// The metrics galleryd exposes at `/metrics`. Labels are route patterns, methods, statuses,
/// stages and outcomes: bounded sets, never raw paths or ids.
public final class GalleryMetrics: HTTPServerObserver, @unchecked Sendable {
    /// The registry they live in.
    public let registry = PrometheusRegistry()
    /// Requests by route pattern, method and status.
    public let httpRequests: PrometheusCounter
    /// Request duration by route pattern.
    public let httpDuration: PrometheusHistogram
    /// Response body bytes sent.
    public let httpBytes: PrometheusCounter
    /// Open client connections.
    public let openConnections: PrometheusGauge
    /// Jobs being processed by this process's workers.
    public let jobsRunning: PrometheusGauge
    /// Finished processing attempts by outcome (done, retry, failed).
    public let jobsFinished: PrometheusCounter
    /// Processing duration by stage (decode, resize, encode, …, total).
    public let processingSeconds: PrometheusHistogram
    /// Orphans the collector removed, by kind (upload, derivative).
    public let orphansRemoved: PrometheusCounter
    /// Login attempts by outcome: success, failure (unknown user or wrong password), throttled (429).
    public let logins: PrometheusCounter

    public init() {
        httpRequests = registry.counter(
            "galleryd_http_requests_total", help: "HTTP requests by route pattern, method and status.",
            labels: ["route", "method", "status"])
        httpDuration = registry.histogram(
            "galleryd_http_request_duration_seconds", help: "HTTP request duration by route pattern.", labels: ["route"])
        httpBytes = registry.counter("galleryd_http_response_bytes_total", help: "Response body bytes sent.")
        httpBytesSeries = httpBytes.series()
        openConnections = registry.gauge("galleryd_http_open_connections", help: "Open client connections.")
        jobsRunning = registry.gauge("galleryd_jobs_running", help: "Jobs being processed by this process.")
        jobsFinished = registry.counter(
            "galleryd_jobs_finished_total", help: "Finished processing attempts by outcome.", labels: ["outcome"])
        processingSeconds = registry.histogram(
            "galleryd_processing_duration_seconds", help: "Image processing duration by stage.", labels: ["stage"],
            buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30])
        orphansRemoved = registry.counter(
            "galleryd_orphans_removed_total",
            help: "Unattached uploads and derivatives of vanished photos removed by the collector, by kind.",
            labels: ["kind"])
        // Both series from the start, so a dashboard sees 0 rather than no data.
        _ = orphansRemoved.series("upload")
        _ = orphansRemoved.series("derivative")
        logins = registry.counter(
            "galleryd_login_attempts_total",
            help: "Login attempts by outcome: success, failure (unknown user or wrong password), throttled (429).",
            labels: ["outcome"])
        for outcome in Self.loginOutcomes { _ = logins.series(outcome) }
    }

    /// The outcomes of `logins`, each a series from the start.
    static let loginOutcomes = ["success", "failure", "throttled"]

    /// Counts a login attempt (`outcome` one of `loginOutcomes`).
    func loginAttempts(outcome: String) {
        logins.series(outcome).increment()
    }

    public func connectionOpened() { openConnections.add(1) }

    public func connectionClosed() { openConnections.add(-1) }

    public func requestFinished(method: HTTPMethod, routePattern: String, status: Int, durationSeconds: Double, bytesSent: Int) {
        // Any token is a method on the wire; only known ones become label values, so a client
        // cannot grow the metrics without bound.
        let methodLabel = Self.knownMethods.contains(method.rawValue) ? method.rawValue : "other"
        let key = RequestKey(route: routePattern, method: methodLabel, status: status)
        seriesLock.lock()
        var entry = requestSeries[key]
        if entry == nil {
            entry = (httpRequests.series(routePattern, methodLabel, String(status)), httpDuration.series(routePattern))
            requestSeries[key] = entry
        }
        seriesLock.unlock()
        entry!.requests.increment()
        entry!.duration.observe(durationSeconds)
        httpBytesSeries.increment(Double(bytesSent))
    }

    private static let knownMethods: Set<String> = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "CONNECT", "TRACE"]

    /// The per-request series, resolved once per (route, method, status) instead of hashing label
    /// arrays three times on every request.
    private struct RequestKey: Hashable {
        let route: String
        let method: String
        let status: Int
    }
    private let seriesLock = NSLock()
    private var requestSeries: [RequestKey: (requests: PrometheusCounter.Series, duration: PrometheusHistogram.Series)] = [:]
    private let httpBytesSeries: PrometheusCounter.Series
}
