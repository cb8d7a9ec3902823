import Foundation
import Postgres

/// The `sessions` table's statements (migrations/0012_users.sql): a session found by its token's
/// hash, created, and revoked.
struct SessionRepository: Sendable {
    /// A live session as a request's authentication reads it.
    struct Found: Sendable, Equatable {
        var sessionId: String
        var userId: String
        var expiresAt: Date
    }

    let pool: PostgresPool

    /// The unexpired session with this token hash, and its `last_used_at` moved to now when it is
    /// more than a minute old (so a busy client costs one write a minute, not one per request).
    func find(tokenHash: String) throws -> Found? {
        let rows = try pool.query(
            """
            with found as (
                select object_id, user_id, expires_at, last_used_at from sessions
                where token_hash = $1 and expires_at > clock_timestamp()
            ), touched as (
                update sessions s set last_used_at = clock_timestamp() from found
                where s.object_id = found.object_id and found.last_used_at < clock_timestamp() - interval '1 minute'
            )
            select object_id, user_id, expires_at from found
            """,
            [tokenHash])
        guard let row = rows.first else { return nil }
        return Found(
            sessionId: try row.decode(String.self, 0), userId: try row.decode(String.self, 1),
            expiresAt: try row.decode(Date.self, 2))
    }

    /// Records a new session for a user, valid for `lifetime` seconds.
    func insert(
        sessionId: String, tokenHash: String, userId: String, createdWith: String, installationId: String?,
        lifetime: TimeInterval, on connection: PostgresConnection
    ) throws {
        try connection.query(
            """
            insert into sessions (object_id, token_hash, user_id, created_with, installation_id, expires_at)
            values ($1, $2, $3, $4, $5, clock_timestamp() + make_interval(secs => $6))
            """,
            [sessionId, tokenHash, userId, createdWith, installationId, lifetime])
    }

    /// Deletes the session with this token hash; false when there was none.
    func delete(tokenHash: String) throws -> Bool {
        try pool.query("delete from sessions where token_hash = $1 returning 1", [tokenHash]).count == 1
    }
}
