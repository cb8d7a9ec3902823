import Foundation
import Postgres

/// The `login_failures` table's statements (migrations/0013_login_throttle.sql): failed logins
/// counted per key (`user:<objectId>`, `username:…` or `email:…` naming no account, `address:…`),
/// and the time until which a key is refused.
struct LoginFailureRepository: Sendable {
    let pool: PostgresPool

    /// How a key's back-off grows: free failures, then `baseDelay`·2^(failures − free − 1) seconds,
    /// at most `maxDelay`; failures older than `forgetAfter` seconds are forgotten.
    struct Backoff: Sendable {
        var free: Int
        var baseDelay: TimeInterval
        var maxDelay: TimeInterval
        var forgetAfter: TimeInterval
    }

    /// What `admit` decided for one key.
    struct Admission: Sendable, Equatable {
        /// Seconds left of the key's block (rounded up, at least 1), or 0 when the attempt may go on.
        var blockedSeconds: Int
        /// The key's failures with this attempt counted (when it may go on).
        var failures: Int
    }

    /// The check and the count of one attempt for `key`, in one step under the key's row lock:
    /// while the key is blocked, the seconds left and nothing counted; else the attempt counted as a
    /// failure before its password is checked (a success gives it back), and the key blocked when
    /// that count passes the free failures. Parallel attempts therefore queue on the row and see
    /// each other's counts: no more than the free failures plus one pass before the block, however
    /// many arrive at once.
    func admit(key: String, backoff: Backoff) throws -> Admission {
        while true {
            // The key's first failure (free is at least 1, so it never blocks).
            if !(try pool.query(
                "insert into login_failures (key, failures) values ($1, 1) on conflict (key) do nothing returning failures",
                [key]
            ).isEmpty) {
                return Admission(blockedSeconds: 0, failures: 1)
            }
            // `previous` locks the row and keeps its state before this statement's update.
            let rows = try pool.query(
                """
                with previous as (
                    select key, failures, last_failure_at, blocked_until,
                        coalesce(blocked_until > clock_timestamp(), false) as blocked
                    from login_failures where key = $1 for update
                ), counted as (
                    select key, blocked, blocked_until, case when blocked then failures
                        when last_failure_at < clock_timestamp() - make_interval(secs => $2) then 1
                        else failures + 1 end as failures
                    from previous
                )
                update login_failures f set
                    failures = c.failures,
                    last_failure_at = case when c.blocked then f.last_failure_at else clock_timestamp() end,
                    blocked_until = case when c.blocked then c.blocked_until
                        when c.failures > $3 then clock_timestamp()
                            + make_interval(secs => least($5::float8, $4::float8 * power(2::float8, least(c.failures - $3 - 1, 30))))
                        else null end
                from counted c
                where f.key = c.key
                returning case when c.blocked then greatest(1, ceil(extract(epoch from c.blocked_until - clock_timestamp())))
                    else 0 end::bigint, c.failures
                """,
                [key, backoff.forgetAfter, backoff.free, backoff.baseDelay, backoff.maxDelay])
            // No row: a success or the sweep deleted it between the two statements; start again.
            if let row = rows.first {
                return Admission(blockedSeconds: try row.decode(Int.self, 0), failures: try row.decode(Int.self, 1))
            }
        }
    }

    /// Blocks `key` for `seconds` from now, unless it is blocked for longer already: the block an
    /// attempt set when `admit` counted it starts again once its password is known to be wrong, so
    /// a slow hash does not eat into it.
    func block(key: String, seconds: TimeInterval) throws {
        try pool.query(
            """
            update login_failures set blocked_until = greatest(blocked_until, clock_timestamp() + make_interval(secs => $2))
            where key = $1
            """,
            [key, seconds])
    }

    /// Gives back the failure `admit` counted for an attempt that succeeded (the address's count:
    /// its block, if any, stands).
    func giveBack(key: String) throws {
        try pool.query("update login_failures set failures = greatest(failures - 1, 0) where key = $1", [key])
    }

    /// Forgets `key`'s failures (a successful login).
    func reset(key: String) throws {
        try pool.query("delete from login_failures where key = $1", [key])
    }

    /// Deletes the rows of keys quiet for longer than `forgetAfter` seconds and no longer blocked.
    func deleteStale(forgetAfter: TimeInterval) throws {
        try pool.query(
            """
            delete from login_failures where last_failure_at < clock_timestamp() - make_interval(secs => $1)
            and (blocked_until is null or blocked_until < clock_timestamp())
            """,
            [forgetAfter])
    }
}
