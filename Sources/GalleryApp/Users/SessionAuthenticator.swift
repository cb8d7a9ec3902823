import Foundation
import HTTPServer
import Synchronization

/// Decides a request's `ParseCaller` from its keys and session token: the master key wins, a
/// session token must name a live session (else 209, as Parse Server answers), and app keys alone
/// are `.anonymous`.
///
/// Found sessions are remembered for a few seconds (Parse Server's default cache TTL is 5 s), so a
/// client paging through its library costs one session lookup per `cacheSeconds`, not one per page.
/// A logout or revocation through this process forgets the token at once (`forget`); one made
/// through another instance takes effect here within `cacheSeconds`.
public final class SessionAuthenticator: Sendable {
    let sessions: SessionRepository
    let cacheSeconds: TimeInterval
    /// The roles of the users sessions log in (`ParseAccess.roleNames`), remembered as long as sessions are.
    public let roles: ParseRoleResolver
    /// Token hash → user and cache expiry (system uptime).
    private let cache = Mutex<[String: (userId: String, until: TimeInterval)]>([:])
    private static let maxCached = 10_000

    init(sessions: SessionRepository, cacheSeconds: TimeInterval = 5) {
        self.sessions = sessions
        self.cacheSeconds = cacheSeconds
        self.roles = ParseRoleResolver(pool: sessions.pool, cacheSeconds: cacheSeconds)
    }

    /// The caller for a request whose keys granted `access` (at least `.client`). The token is the
    /// `X-Parse-Session-Token` header, else `bodyToken` (a body's `_SessionToken`, the JavaScript SDK).
    public func caller(_ request: HTTPRequest, access: KeyChecker.Access, bodyToken: String? = nil) throws
        -> ParseCaller
    {
        if access == .master { return .master }
        guard let token = request.headers["X-Parse-Session-Token"] ?? bodyToken else { return .anonymous }
        return .user(objectId: try userId(for: SessionToken(token)))
    }

    /// The caller `caller(_:access:)` would decide when that needs no database read (the master
    /// key, no token, or a token remembered and not yet due), else nil: for the event loop, which
    /// must not block.
    func rememberedCaller(_ request: HTTPRequest, access: KeyChecker.Access) -> ParseCaller? {
        if access == .master { return .master }
        guard let value = request.headers["X-Parse-Session-Token"] else { return .anonymous }
        let token = SessionToken(value)
        guard token.isPlausible else { return nil }
        let hash = token.hash
        let now = ProcessInfo.processInfo.systemUptime
        guard let cached = cache.withLock({ $0[hash] }), cached.until > now else { return nil }
        return .user(objectId: cached.userId)
    }

    /// The user a token logs in, or 209.
    func userId(for token: SessionToken) throws -> String {
        guard token.isPlausible else { throw ParseError.invalidSessionToken() }
        let hash = token.hash
        let now = ProcessInfo.processInfo.systemUptime
        if let cached = cache.withLock({ $0[hash] }), cached.until > now { return cached.userId }
        guard let found = try sessions.find(tokenHash: hash) else {
            cache.withLock { _ = $0.removeValue(forKey: hash) }
            throw ParseError.invalidSessionToken()
        }
        // Never cache past the session's own expiry.
        let until = now + min(cacheSeconds, max(0, found.expiresAt.timeIntervalSinceNow))
        cache.withLock { cache in
            if cache.count >= Self.maxCached { cache.removeAll(keepingCapacity: true) }
            cache[hash] = (found.userId, until)
        }
        return found.userId
    }

    /// The live session of `token` read from the database, never the cache (a LiveQuery
    /// subscription keeps it, and times its expiry), or 209.
    func liveSession(for token: SessionToken) throws -> SessionRepository.Found {
        guard token.isPlausible, let found = try sessions.find(tokenHash: token.hash) else {
            throw ParseError.invalidSessionToken()
        }
        return found
    }

    /// Forgets a token (logout, revocation, password change) so this process stops accepting it at once.
    func forget(_ token: SessionToken) {
        forget(hash: token.hash)
    }

    /// Forgets a token by the hash the database keeps (a session revoked by its objectId, or one of
    /// the sessions a password change revokes).
    func forget(hash: String) {
        cache.withLock { _ = $0.removeValue(forKey: hash) }
    }

    /// Forgets every cached token (a user deleted, all of a user's sessions revoked).
    func forgetAll() {
        cache.withLock { $0.removeAll() }
    }
}
