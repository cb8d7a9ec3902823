import Foundation

/// Bounds on LiveQuery clients, each with its default and the reason for it.
struct LiveQueryLimits: Sendable {
    /// Seconds a socket may stay open without `connect` before it is closed (1008): an upgrade
    /// costs no keys, so an idle one must not hold a socket for good.
    var connectTimeout: TimeInterval = 10
    /// Subscriptions one socket may hold; past it `subscribe` is an error frame (code 155).
    /// 100: an app subscribes to a handful of queries, and each costs a match per change.
    var maxSubscriptions = 100
    /// Sockets one client address may hold open at once (0: no cap); past it the upgrade is
    /// answered 429 (Parse code 155).
    var maxSocketsPerAddress = 50
    /// The REST caps applied to `where` (size, depth, `$in` lists, conditions, strings, regexes).
    var query = ParseLimits()
}
