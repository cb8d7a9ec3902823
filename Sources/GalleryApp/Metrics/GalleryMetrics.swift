import Foundation
import HTTPServer
import Synchronization

/// The metrics galleryd exposes at `/metrics`. Labels are route patterns, methods, statuses,
/// stages and outcomes: bounded sets, never raw paths or ids.
public final class GalleryMetrics: HTTPServerObserver, Sendable {
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
    /// scrypt hashes computed for logins, sign-ups and password changes (each one a core's tens of
    /// milliseconds): what a flood of logins costs, and proof that refused input costs none.
    public let passwordHashes: PrometheusCounter

    public init() {
        httpRequests = registry.counter(
            "galleryd_http_requests_total", help: "HTTP requests by route pattern, method and status.",
            labels: ["route", "method", "status"])
        httpDuration = registry.histogram(
            "galleryd_http_request_duration_seconds", help: "HTTP request duration by route pattern.", labels: ["route"]
        )
        httpBytes = registry.counter("galleryd_http_response_bytes_total", help: "Response body bytes sent.")
        httpBytesSeries = httpBytes.series()
        requestTable = RequestSeriesTable(requests: httpRequests, duration: httpDuration)
        loopRecorders = LoopRequestRecorders(bytesSeries: httpBytesSeries)
        registry.beforeEachRead { [loopRecorders] in loopRecorders.fold() }
        openConnections = registry.gauge("galleryd_http_open_connections", help: "Open client connections.")
        jobsRunning = registry.gauge("galleryd_jobs_running", help: "Jobs being processed by this process.")
        jobsFinished = registry.counter(
            "galleryd_jobs_finished_total", help: "Finished processing attempts by outcome.", labels: ["outcome"])
        processingSeconds = registry.histogram(
            "galleryd_processing_duration_seconds", help: "Image processing duration by stage.", labels: ["stage"],
            buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30])
        orphansRemoved = registry.counter(
            "galleryd_orphans_removed_total",
            help:
                "Unattached uploads, derivatives of vanished photos and abandoned multipart uploads removed by the collector, by kind.",
            labels: ["kind"])
        // Every kind's series from the start, so a dashboard sees 0 rather than no data.
        _ = orphansRemoved.series("upload")
        _ = orphansRemoved.series("derivative")
        _ = orphansRemoved.series("multipart")
        logins = registry.counter(
            "galleryd_login_attempts_total",
            help: "Login attempts by outcome: success, failure (unknown user or wrong password), throttled (429).",
            labels: ["outcome"])
        for outcome in Self.loginOutcomes { _ = logins.series(outcome) }
        passwordHashes = registry.counter(
            "galleryd_password_hashes_total", help: "scrypt hashes computed for logins, sign-ups and password changes.")
        _ = passwordHashes.series()
    }

    /// The outcomes of `logins`, each a series from the start.
    static let loginOutcomes = ["success", "failure", "throttled"]

    /// Counts a login attempt (`outcome` one of `loginOutcomes`).
    func loginAttempts(outcome: String) {
        logins.series(outcome).increment()
    }

    /// A recorder for one event loop, counting its requests apart from every other loop's; each
    /// scrape adds them up (`LoopRequestMetrics`).
    public func makeLoopRecorder() -> any HTTPLoopRecorder {
        let recorder = LoopRequestMetrics(table: requestTable, bounds: httpDuration.family.buckets)
        loopRecorders.add(recorder)
        return recorder
    }

    public func connectionOpened() { openConnections.add(1) }

    public func connectionClosed() { openConnections.add(-1) }

    public func requestFinished(
        method: HTTPMethod, routePattern: String, status: Int, durationSeconds: Double, bytesSent: Int
    ) {
        // Any token is a method on the wire; only known ones become label values, so a client
        // cannot grow the metrics without bound.
        let methodLabel = Self.methodLabel(method)
        // Event loops count through their own recorders (`makeLoopRecorder`); this path is for
        // exchanges made without a loop (in-process), so a lookup under the table's lock will do.
        let series = requestTable.series(RequestKey(route: routePattern, method: methodLabel, status: status))
        series.requests.increment(by: 1)
        series.duration.observe(durationSeconds)
        httpBytesSeries.increment(by: bytesSent)
    }

    /// The method's label value: the token for the methods of RFC 9110, "other" for the rest.
    /// A switch of short (inline) strings: no hash per request.
    static func methodLabel(_ method: HTTPMethod) -> String {
        switch method.rawValue {
        case "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "CONNECT", "TRACE": return method.rawValue
        default: return "other"
        }
    }

    /// The per-request series of one (route, method, status), resolved once instead of hashing
    /// label arrays three times on every request.
    struct RequestKey: Hashable {
        let route: String
        let method: String
        let status: Int
    }
    typealias RequestSeries = (requests: PrometheusCounter.Series, duration: PrometheusHistogram.Series)

    /// The registry's series by key, shared by `requestFinished` and the loop recorders.
    private let requestTable: RequestSeriesTable
    /// The loop recorders made so far, folded into the registry before each read.
    private let loopRecorders: LoopRequestRecorders
    private let httpBytesSeries: PrometheusCounter.Series

    /// The registry's request counter and duration series by (route, method label, status),
    /// made on first use under a lock.
    final class RequestSeriesTable: Sendable {
        private let requests: PrometheusCounter
        private let duration: PrometheusHistogram
        private let byKey = Mutex<[RequestKey: RequestSeries]>([:])

        init(requests: PrometheusCounter, duration: PrometheusHistogram) {
            self.requests = requests
            self.duration = duration
        }

        /// The series of `key`, made the first time.
        func series(_ key: RequestKey) -> RequestSeries {
            byKey.withLock { byKey in
                if let found = byKey[key] { return found }
                let made = (
                    requests: requests.series(key.route, key.method, String(key.status)),
                    duration: duration.series(key.route)
                )
                byKey[key] = made
                return made
            }
        }
    }
}
