import Foundation
import Synchronization

/// Login back-off: failed logins are counted per account and per client address in PostgreSQL
/// (`LoginFailureRepository`), so the back-off holds across instances and restarts. The account
/// key is the account itself (`user:<objectId>`), whether the login names it by username or by
/// email; a name that matches no account is its own key. After a key's free failures, each further
/// failure blocks the key for `baseDelay` seconds, doubling up to `maxDelay`; while blocked every
/// attempt for it, right or wrong, is answered 429 with `Retry-After` (Parse code 155) without
/// checking the password. The check and the count are one step (`admit`, before the hash), so
/// parallel guesses cannot all pass an open window. A success forgets the account's failures and
/// gives back the address's count; an address's failures are forgotten after `forgetAfter` seconds
/// without one, so an attacker with one valid account cannot reset its address's count between
/// guesses at other accounts.
final class LoginThrottle: Sendable {
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
    /// Failures recorded by this process (every 100th sweeps stale rows).
    private let failuresSeen = Atomic<Int>(0)

    init(failures: LoginFailureRepository, limits: Limits, metrics: GalleryMetrics?) {
        self.failures = failures
        self.limits = limits
        self.metrics = metrics
    }

    /// The counting keys of an attempt: the account (nil for input that can name none) and, when
    /// counted, the address.
    struct Keys: Sendable {
        var account: String?
        var address: String?
    }

    /// The keys for a login from `address` (`ip:port` or `[ip6]:port`): `user:<objectId>` for an
    /// existing account (`userId`), else the username or the case-folded email it named; no
    /// account key when `overLong` (such input names no account, and must not grow the table).
    func keys(userId: String?, username: String?, email: String?, overLong: Bool, address: String?) -> Keys {
        var account: String?
        if !overLong {
            account =
                userId.map { "user:" + $0 } ?? username.map { "username:" + $0 } ?? "email:"
                + (email ?? "").lowercased()
        }
        let ip = limits.freeFailuresPerAddress > 0 ? address.flatMap(Self.host) : nil
        return Keys(account: account, address: ip.map { "address:" + $0 })
    }

    /// An attempt `admit` let through: its keys, and each key's failures with it counted.
    struct Attempt: Sendable {
        var keys: Keys
        var failures: [(key: String, count: Int, free: Int)]
    }

    /// Checks and counts an attempt, the address first, before its password is hashed; throws
    /// `AccountError.throttled` while either key is blocked.
    func admit(_ keys: Keys) throws -> Attempt {
        var attempt = Attempt(keys: keys, failures: [])
        let counted = [(keys.address, limits.freeFailuresPerAddress), (keys.account, limits.freeFailuresPerUsername)]
        for case (let key?, let free) in counted {
            let admission = try failures.admit(key: key, backoff: backoff(free: free))
            if admission.blockedSeconds > 0 {
                metrics?.loginAttempts(outcome: "throttled")
                throw AccountError.throttled(retryAfterSeconds: admission.blockedSeconds)
            }
            attempt.failures.append((key, admission.failures, free))
        }
        return attempt
    }

    /// Notes a failed attempt (`admit` already counted it): a key it took past its free failures
    /// is blocked from now (the block `admit` set kept parallel guesses out meanwhile). Now and
    /// then deletes the rows of keys long quiet (one statement per 100 failures).
    func recordFailure(_ attempt: Attempt) throws {
        metrics?.loginAttempts(outcome: "failure")
        for failure in attempt.failures {
            if let delay = delay(failures: failure.count, free: failure.free) {
                try failures.block(key: failure.key, seconds: delay)
            }
        }
        let sweep = failuresSeen.add(1, ordering: .relaxed).newValue % 100 == 0
        if sweep { try failures.deleteStale(forgetAfter: limits.forgetAfter) }
    }

    /// Forgets the account's failures after a successful login and gives back the address's count.
    func recordSuccess(_ keys: Keys) throws {
        metrics?.loginAttempts(outcome: "success")
        if let account = keys.account { try failures.reset(key: account) }
        if let address = keys.address { try failures.giveBack(key: address) }
    }

    /// The block after the `failures`-th failure: none within the free ones, then
    /// `baseDelay`·2^(failures − free − 1) seconds, at most `maxDelay` (as `admit` computes it).
    func delay(failures: Int, free: Int) -> TimeInterval? {
        guard failures > free else { return nil }
        let doublings = min(failures - free - 1, 30)
        return min(limits.maxDelay, limits.baseDelay * pow(2, Double(doublings)))
    }

    private func backoff(free: Int) -> LoginFailureRepository.Backoff {
        LoginFailureRepository.Backoff(
            free: free, baseDelay: limits.baseDelay, maxDelay: limits.maxDelay, forgetAfter: limits.forgetAfter)
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
