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
}
