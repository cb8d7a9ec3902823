import HTTPServer
import Synchronization

/// The headers of a signed asset's answer, `Cache-Control: private, max-age=<seconds until its
/// signature expires>`: built once per distinct max-age and reused, since every request in one
/// second for URLs of one window asks for the same (the bucket's fast path allocates no header
/// list per request, as it does not for a public bucket).
final class PrivateCacheHeaders: Sendable {
    private let last = Mutex<(maxAge: Int64, headers: HTTPHeaders)>((-1, HTTPHeaders()))

    /// `Cache-Control: private, max-age=<maxAge>`.
    func headers(maxAge: Int64) -> HTTPHeaders {
        if let kept = last.withLock({ $0.maxAge == maxAge ? $0.headers : nil }) { return kept }
        let headers: HTTPHeaders = ["Cache-Control": "private, max-age=\(maxAge)"]
        last.withLock { $0 = (maxAge, headers) }
        return headers
    }
}
