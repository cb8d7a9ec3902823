import Foundation
import Postgres

/// The `login_failures` table's statements (migrations/0013_login_throttle.sql): failed logins
/// counted per key (`username:…`, `address:…`), and the time until which a key is refused.
struct LoginFailureRepository: Sendable {
    let pool: PostgresPool

    /// Seconds until the most distant block among `keys` ends (rounded up), or 0 when none is blocked.
    func blockedSeconds(keys: [String]) throws -> Int {
        guard !keys.isEmpty else { return 0 }
        let row = try pool.query(
            """
            select coalesce(max(ceil(extract(epoch from blocked_until - clock_timestamp()))), 0)::bigint
            from login_failures where key in ($1::text, $2::text) and blocked_until > clock_timestamp()
            """,
            [keys[0], keys.count > 1 ? keys[1] : nil]
        ).first!
        return try row.decode(Int.self, 0)
    }

    /// Counts one more failure for `key` (starting again from 1 when the last one is older than
    /// `forgetAfter` seconds) and returns the count.
    func recordFailure(key: String, forgetAfter: TimeInterval) throws -> Int {
        try pool.query(
            """
            insert into login_failures as f (key, failures) values ($1, 1)
            on conflict (key) do update set
                failures = case when f.last_failure_at < clock_timestamp() - make_interval(secs => $2)
                    then 1 else f.failures + 1 end,
                last_failure_at = clock_timestamp()
            returning failures
            """,
            [key, forgetAfter]
        ).first!.decode(Int.self, 0)
    }

    /// Refuses `key` for the next `seconds`.
    func block(key: String, seconds: TimeInterval) throws {
        try pool.query(
            "update login_failures set blocked_until = clock_timestamp() + make_interval(secs => $2) where key = $1",
            [key, seconds])
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
