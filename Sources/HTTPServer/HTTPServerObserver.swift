/// Sees connections and finished requests, for metrics (Prometheus counters and histograms).
/// Called on the server's socket threads: implementations must be thread-safe and quick.
public protocol HTTPServerObserver: AnyObject, Sendable {
    /// A connection was accepted.
    func connectionOpened()
    /// A connection was closed (by either side, a timeout or shutdown).
    func connectionClosed()
    /// A response was written completely (or the connection failed while writing it).
    /// `routePattern` is the matched route's pattern, or `"unmatched"`.
    func requestFinished(method: HTTPMethod, routePattern: String, status: Int, durationSeconds: Double, bytesSent: Int)
    /// A recorder of finished requests for one event loop, called by that loop only (its thread or
    /// serial queue), so it can count without shared cache lines or locks and leave the sum to the
    /// scrape (decision 041, round 8). The default forwards to `requestFinished`.
    func makeLoopRecorder() -> any HTTPLoopRecorder
}

extension HTTPServerObserver {
    /// Forwards each request to `requestFinished`, for observers without per-loop counts.
    public func makeLoopRecorder() -> any HTTPLoopRecorder { HTTPForwardingLoopRecorder(observer: self) }
}

/// Records the requests one event loop finishes. Not `Sendable`: each event loop has its own
/// (`HTTPServerObserver.makeLoopRecorder`) and calls it from its thread or serial queue only.
public protocol HTTPLoopRecorder: AnyObject {
    /// A response was written completely (or the connection failed while writing it), `nanoseconds`
    /// after its request's head began; `routePattern` is the matched route's pattern, or `"unmatched"`.
    func requestFinished(method: HTTPMethod, routePattern: String, status: Int, nanoseconds: Int, bytesSent: Int)
}

/// The default loop recorder: each request handed to the observer's `requestFinished`.
final class HTTPForwardingLoopRecorder: HTTPLoopRecorder {
    let observer: any HTTPServerObserver

    init(observer: any HTTPServerObserver) { self.observer = observer }

    func requestFinished(method: HTTPMethod, routePattern: String, status: Int, nanoseconds: Int, bytesSent: Int) {
        observer.requestFinished(
            method: method, routePattern: routePattern, status: status, durationSeconds: Double(nanoseconds) / 1e9,
            bytesSent: bytesSent)
    }
}
