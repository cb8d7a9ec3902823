import Foundation

/// Login back-off: failed logins are counted per username and per client address in PostgreSQL
/// (`LoginFailureRepository`), so the back-off holds across instances and restarts. After a key's
/// free failures, each further failure blocks the key for `baseDelay` seconds, doubling up to
/// `maxDelay`; while blocked every attempt for it, right or wrong, is answered 429 with
/// `Retry-After` (Parse code 155) without checking the password. A success forgets the username's
/// failures; an address's are forgotten after `forgetAfter` seconds without one, so an attacker
/// with one valid account cannot reset its address's count between guesses at other accounts.
final class LoginThrottle: @unchecked Sendable {
    /// The throttle's numbers, each with its reason.
    struct Limits: Sendable {
        /// Failures for one username before the back-off starts: enough for a few typos.
        var freeFailuresPerUsername = 5
        /// Failures from one address (any usernames) before the back-off starts; 0 turns the address
        /// count off. Higher than per username: several people may share an address (a household's NAT).
        var freeFailuresPerAddress = 20
        /// The first block, in seconds.
        var baseDelay: TimeInterval = 1
        /// The longest block, in seconds (15 minutes: one guess per 15 minutes makes online guessing
        /// hopeless, and a locked-out owner waits no longer than that).
        var maxDelay: TimeInterval = 900
        /// Failures older than this (seconds since the key's last failure) are forgotten: a day.
        var forgetAfter: TimeInterval = 86_400
    }

    let failures: LoginFailureRepository
    let limits: Limits
    private let metrics: GalleryMetrics?
    private let lock = NSLock()
    private var failuresSeen = 0

    init(failures: LoginFailureRepository, limits: Limits, metrics: GalleryMetrics?) {
        self.failures = failures
        self.limits = limits
        self.metrics = metrics
    }

    /// The counting keys of an attempt: the username (or email) and, when counted, the address.
    struct Keys: Sendable {
        var account: String
        var address: String?
    }

    /// The keys for a login by `username` (or `email`, case-folded) from `address` (`ip:port` or `[ip6]:port`).
    func keys(username: String?, email: String?, address: String?) -> Keys {
        let account = username.map { "username:" + $0 } ?? "email:" + (email ?? "").lowercased()
        let ip = limits.freeFailuresPerAddress > 0 ? address.flatMap(Self.host) : nil
        return Keys(account: account, address: ip.map { "address:" + $0 })
    }

    /// Throws `AccountError.throttled` while either key is blocked.
    func check(_ keys: Keys) throws {
        let seconds = try failures.blockedSeconds(keys: [keys.account] + (keys.address.map { [$0] } ?? []))
        if seconds > 0 {
            metrics?.loginAttempts(outcome: "throttled")
            throw AccountError.throttled(retryAfterSeconds: max(1, seconds))
        }
    }

    /// Counts a failure against both keys and blocks those past their free failures.
    func recordFailure(_ keys: Keys) throws {
        metrics?.loginAttempts(outcome: "failure")
        let accountCount = try failures.recordFailure(key: keys.account, forgetAfter: limits.forgetAfter)
        if let delay = delay(failures: accountCount, free: limits.freeFailuresPerUsername) {
            try failures.block(key: keys.account, seconds: delay)
        }
        if let address = keys.address {
            let addressCount = try failures.recordFailure(key: address, forgetAfter: limits.forgetAfter)
            if let delay = delay(failures: addressCount, free: limits.freeFailuresPerAddress) {
                try failures.block(key: address, seconds: delay)
            }
        }
        // Now and then, the rows of keys long quiet go (one statement per 100 failures).
        let sweep = lock.withLock { () -> Bool in
            failuresSeen += 1
            return failuresSeen % 100 == 0
        }
        if sweep { try failures.deleteStale(forgetAfter: limits.forgetAfter) }
    }

    /// Forgets the account key's failures after a successful login.
    func recordSuccess(_ keys: Keys) throws {
        metrics?.loginAttempts(outcome: "success")
        try failures.reset(key: keys.account)
    }

    /// The block after the `failures`-th failure: none within the free ones, then
    /// `baseDelay`·2^(failures − free − 1) seconds, at most `maxDelay`.
    func delay(failures: Int, free: Int) -> TimeInterval? {
        guard failures > free else { return nil }
        let doublings = min(failures - free - 1, 30)
        return min(limits.maxDelay, limits.baseDelay * pow(2, Double(doublings)))
    }

    /// The host part of a peer address as the HTTP layer writes it (`1.2.3.4:5678`, `[::1]:5678`).
    static func host(_ address: String) -> String? {
        if address.hasPrefix("[") {
            guard let end = address.firstIndex(of: "]") else { return nil }
            return String(address[address.index(after: address.startIndex)..<end])
        }
        guard let colon = address.lastIndex(of: ":") else { return address.isEmpty ? nil : address }
        return String(address[..<colon])
    }
}
