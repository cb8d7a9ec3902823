import Foundation
import Postgres
import Synchronization

/// The roles a user has: the roles whose `users` relation names them, and every role containing
/// one of those in its `roles` relation, transitively (Parse Server's `Auth.getRolesForUser` and
/// role graph). One recursive query per user; `union` stops at a role already reached, so cycles
/// in the graph are harmless.
///
/// This is the one entry point for role membership: the routes resolve a request's roles here
/// once (`access(for:publicRead:)`), and every check reads them from `ParseAccess.roleNames` /
/// `ParseAccess.principals` (ACLs, class-level permissions `role:Name`, LiveQuery).
///
/// Answers are remembered for `cacheSeconds` (as sessions are); a role change through this process
/// forgets them all at once (`forgetAll`), one through another instance shows within `cacheSeconds`.
public final class ParseRoleResolver: Sendable {
    let pool: PostgresPool
    let cacheSeconds: TimeInterval
    private let cache = Mutex<[String: (names: [String], until: TimeInterval)]>([:])
    private static let maxCached = 10_000

    /// The recursive query: the user's direct roles, then the parents of roles reached.
    static let sql = """
        with recursive reached(id) as (
            select role_id from role_users where user_id = $1::text
            union
            select rr.parent_id from role_roles rr join reached on rr.child_id = reached.id
        )
        select r.name from roles r join reached on r.object_id = reached.id order by r.name
        """

    /// A resolver reading `pool`.
    public init(pool: PostgresPool, cacheSeconds: TimeInterval = 5) {
        self.pool = pool
        self.cacheSeconds = cacheSeconds
    }

    /// Every role name `userId` has, sorted.
    public func roleNames(forUser userId: String) throws -> [String] {
        let now = ProcessInfo.processInfo.systemUptime
        if let cached = cache.withLock({ $0[userId] }), cached.until > now { return cached.names }
        let names = try pool.query(Self.sql, [userId], retry: .safe).map { try $0.decode(String.self, 0) }
        cache.withLock {
            if $0.count >= Self.maxCached { $0.removeAll(keepingCapacity: true) }
            $0[userId] = (names, now + cacheSeconds)
        }
        return names
    }

    /// The access of a request acting for `caller`, with its roles resolved (none to resolve for
    /// the master key or without a session).
    public func access(for caller: ParseCaller, publicRead: Bool) throws -> ParseAccess {
        guard let userId = caller.userId else { return ParseAccess(caller: caller, publicRead: publicRead) }
        return ParseAccess(caller: caller, publicRead: publicRead, roleNames: try roleNames(forUser: userId))
    }

    /// The access `access(for:publicRead:)` would give when that needs no database read (no user,
    /// or their roles remembered and not yet due), else nil: for the event loop, which must not block.
    func rememberedAccess(for caller: ParseCaller, publicRead: Bool) -> ParseAccess? {
        guard let userId = caller.userId else { return ParseAccess(caller: caller, publicRead: publicRead) }
        let now = ProcessInfo.processInfo.systemUptime
        guard let cached = cache.withLock({ $0[userId] }), cached.until > now else { return nil }
        return ParseAccess(caller: caller, publicRead: publicRead, roleNames: cached.names)
    }

    /// Forgets every remembered answer: a role was created, changed or deleted.
    public func forgetAll() {
        cache.withLock { $0.removeAll() }
    }
}
