import Foundation
import Postgres

/// The `request_ids` table (migrations 0008, 0018): the first answer to a create sent with
/// `X-Parse-Request-Id`, recorded in the create's own transaction so a retry on any instance gets
/// it back (`ParseRequestIdempotency`). Its keys are SHA-256 digests in hex (the table refuses
/// anything else), never the caller's scope with its session token. Its statements go through the pool, so inside
/// `PostgresPool.sharingTransaction` they join the caller's transaction.
struct RequestIdRepository: Sendable {
    /// A recorded answer.
    struct Answer: Sendable, Equatable {
        /// The HTTP status code and its reason phrase.
        var status: Int
        var reason: String
        /// The JSON body, as sent.
        var json: [UInt8]
        /// The `Location` of a created object, if the answer had one.
        var location: String?
    }

    let pool: PostgresPool

    /// Waits until no other transaction works on `key` (a transaction-scoped advisory lock on its
    /// hash), so runs of one key follow each other across instances.
    func lock(_ key: String) throws {
        try pool.query("select pg_advisory_xact_lock(hashtext($1))", [key])
    }

    /// The answer recorded for `key` and not yet expired, or nil.
    func answer(for key: String) throws -> Answer? {
        guard
            let row = try pool.query(
                "select status, reason, body, location from request_ids where key = $1 and expires_at > now()", [key],
                retry: .safe
            ).first
        else { return nil }
        return Answer(
            status: try row.decode(Int.self, "status"), reason: try row.decode(String.self, "reason"),
            json: Array(try row.decode(String.self, "body").utf8), location: try row.decode(String?.self, "location"))
    }

    /// Records `answer` for `key` for `ttl` seconds, replacing an expired record of the same key.
    func record(_ answer: Answer, for key: String, ttl: TimeInterval) throws {
        try pool.query(
            """
            insert into request_ids (key, status, reason, body, location, expires_at)
            values ($1, $2, $3, $4, $5, now() + make_interval(secs => $6))
            on conflict (key) do update set status = excluded.status, reason = excluded.reason, body = excluded.body,
                location = excluded.location, expires_at = excluded.expires_at
            """,
            [key, answer.status, answer.reason, String(decoding: answer.json, as: UTF8.self), answer.location, ttl])
    }

    /// Deletes the records past their expiry.
    func deleteExpired() throws {
        try pool.query("delete from request_ids where expires_at < now()")
    }
}
