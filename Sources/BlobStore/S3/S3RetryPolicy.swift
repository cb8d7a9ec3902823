import Foundation

/// When and how often a request to the object store is tried again. Retried: 5xx, 429, `SlowDown`,
/// connection failures and timeouts. Never retried: any other 4xx (a wrong signature, a missing
/// key, a refused permission give the same answer again).
public struct S3RetryPolicy: Sendable, Equatable {
    /// Attempts in all, the first included. Default 5: with the back-off below, about 3 s of waiting.
    public var maxAttempts: Int
    /// First back-off ceiling in seconds; doubles per attempt ("full jitter": a uniform wait between
    /// 0 and the ceiling, so many instances do not retry in lock-step). Default 0.1 s.
    public var baseDelay: Double
    /// Largest back-off ceiling in seconds. Default 2 s.
    public var maxDelay: Double
    /// Seconds to wait for a connection, and for each read or write on it. Default 30 s.
    public var timeout: Double

    /// A policy with the defaults above.
    public init(maxAttempts: Int = 5, baseDelay: Double = 0.1, maxDelay: Double = 2, timeout: Double = 30) {
        self.maxAttempts = max(1, maxAttempts)
        self.baseDelay = baseDelay
        self.maxDelay = maxDelay
        self.timeout = timeout
    }

    /// Whether an answer with this status and S3 error code is worth another try.
    public static func isRetryable(status: Int, code: String) -> Bool {
        status >= 500 || status == 429 || code == "SlowDown" || code == "RequestTimeout" || code == "InternalError"
    }

    /// The wait before attempt `attempt + 1` (attempt counts from 1): full jitter over an
    /// exponentially growing ceiling.
    public func delay(afterAttempt attempt: Int) -> Double {
        let ceiling = min(maxDelay, baseDelay * pow(2, Double(attempt - 1)))
        return Double.random(in: 0...max(0, ceiling))
    }
}
