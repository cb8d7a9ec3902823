import Foundation
import Postgres

/// The `sessions` table's statements (migrations/0012_users.sql): a session found by its token's
/// hash, created, listed, and revoked.
struct SessionRepository: Sendable {
    /// A session as `GET /sessions` shows it (Parse's `_Session`).
    struct Session: Sendable, Equatable {
        var objectId: String
        var tokenHash: String
        var userId: String
        var createdWith: String
        var installationId: String?
        var createdAt: Date
        var expiresAt: Date
        var lastUsedAt: Date
    }

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

    /// Deletes a user's expired sessions (each login tidies its own user's, through `sessions_user_id`),
    /// so a client that logs in again and again does not grow the table for a year.
    func deleteExpired(userId: String) throws {
        try pool.query("delete from sessions where user_id = $1 and expires_at <= clock_timestamp()", [userId])
    }

    /// Deletes the session with this token hash; false when there was none.
    func delete(tokenHash: String) throws -> Bool {
        try pool.query("delete from sessions where token_hash = $1 returning 1", [tokenHash]).count == 1
    }

    private static let columns =
        "object_id, token_hash, user_id, created_with, installation_id, created_at, expires_at, last_used_at"

    /// The unexpired session with this token hash, in full (`GET /sessions/me`).
    func session(tokenHash: String) throws -> Session? {
        try pool.query(
            "select \(Self.columns) from sessions where token_hash = $1 and expires_at > clock_timestamp()",
            [tokenHash], retry: .safe
        ).first.map(Self.session)
    }

    /// A user's unexpired sessions, newest first.
    func sessions(userId: String) throws -> [Session] {
        try pool.query(
            """
            select \(Self.columns) from sessions where user_id = $1 and expires_at > clock_timestamp()
            order by created_at desc, object_id
            """,
            [userId], retry: .safe
        ).map(Self.session)
    }

    /// Every unexpired session (the master key's `GET /sessions`), newest first, at most `limit`.
    func all(limit: Int) throws -> [Session] {
        try pool.query(
            "select \(Self.columns) from sessions where expires_at > clock_timestamp() order by created_at desc, object_id limit $1",
            [limit], retry: .safe
        ).map(Self.session)
    }

    /// Deletes a session by objectId, only if it belongs to `userId` (any user's for nil); the
    /// deleted token's hash, or nil when there was none the caller could see.
    func delete(objectId: String, userId: String?) throws -> String? {
        try pool.query(
            "delete from sessions where object_id = $1 and ($2::text is null or user_id = $2::text) returning token_hash",
            [objectId, userId]
        ).first.map { try $0.decode(String.self, 0) }
    }

    /// Deletes a user's sessions except the one with `keeping` (a password change keeps the session
    /// that made it); the hashes of those deleted, so this process can forget them at once.
    func deleteAll(userId: String, keeping tokenHash: String? = nil) throws -> [String] {
        try pool.query(
            "delete from sessions where user_id = $1 and ($2::text is null or token_hash <> $2::text) returning token_hash",
            [userId, tokenHash]
        ).map { try $0.decode(String.self, 0) }
    }

    private static func session(_ row: PostgresRow) throws -> Session {
        Session(
            objectId: try row.decode(String.self, 0), tokenHash: try row.decode(String.self, 1),
            userId: try row.decode(String.self, 2), createdWith: try row.decode(String.self, 3),
            installationId: try row.decode(String?.self, 4), createdAt: try row.decode(Date.self, 5),
            expiresAt: try row.decode(Date.self, 6), lastUsedAt: try row.decode(Date.self, 7))
    }
}
