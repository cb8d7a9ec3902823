import Foundation
import Postgres

/// The `users` table's statements (migrations/0012_users.sql). The password hash is read only where
/// a password is checked (`credentials`); every other read leaves it in the database.
struct UserRepository: Sendable {
    typealias User = UserAccount

    /// What a login checks: the user's id and stored hash.
    struct Credentials: Sendable {
        var objectId: String
        var passwordHash: String
    }

    /// The unique indexes, by name, to tell a taken username from a taken email.
    static let usernameIndex = "users_username_key"
    static let emailIndex = "users_email_key"

    let pool: PostgresPool

    private static let columns = "object_id, username, email, is_admin, created_at, updated_at"

    /// Adds a user; throws `AccountError.usernameTaken` or `.emailTaken` for a duplicate.
    func insert(objectId: String, username: String, email: String?, passwordHash: String, isAdmin: Bool) throws -> User
    {
        let rows = try mappingDuplicates {
            try pool.query(
                """
                insert into users (object_id, username, email, password_hash, is_admin) values ($1, $2, $3, $4, $5)
                returning \(Self.columns)
                """,
                [objectId, username, email, passwordHash, isAdmin])
        }
        return try Self.user(rows.first!)
    }

    /// The user with this objectId.
    func find(objectId: String) throws -> User? {
        try pool.query("select \(Self.columns) from users where object_id = $1", [objectId], retry: .safe).first.map(
            Self.user)
    }

    /// The user with this username (case-sensitive, as Parse Server).
    func find(username: String) throws -> User? {
        try pool.query("select \(Self.columns) from users where username = $1", [username], retry: .safe).first.map(
            Self.user)
    }

    /// Every user, oldest first.
    func all() throws -> [User] {
        try pool.query("select \(Self.columns) from users order by created_at, object_id", retry: .safe).map(Self.user)
    }

    /// The id and stored hash of the user a login names: by username, or by email (case-insensitive).
    func credentials(username: String?, email: String?) throws -> Credentials? {
        let rows: PostgresResult
        if let username {
            rows = try pool.query(
                "select object_id, password_hash from users where username = $1", [username], retry: .safe)
        } else if let email {
            rows = try pool.query(
                "select object_id, password_hash from users where lower(email) = lower($1) and email is not null",
                [email], retry: .safe)
        } else {
            return nil
        }
        guard let row = rows.first else { return nil }
        return Credentials(objectId: try row.decode(String.self, 0), passwordHash: try row.decode(String.self, 1))
    }

    /// Replaces a stored hash only if it is still `old` (a rehash racing a password change loses).
    func replaceHash(objectId: String, old: String, new: String) throws {
        try pool.query(
            "update users set password_hash = $3 where object_id = $1 and password_hash = $2", [objectId, old, new])
    }

    /// What an update may change; nil members stay as they are.
    struct Changes: Sendable {
        var username: String?
        /// `.some(nil)` removes the email.
        var email: String??
        var passwordHash: String?
    }

    /// Applies `changes`; nil when the user does not exist.
    func update(objectId: String, _ changes: Changes) throws -> User? {
        let rows = try mappingDuplicates {
            try pool.query(
                """
                update users set
                    username = coalesce($2::text, username),
                    email = case when $3::boolean then $4::text else email end,
                    password_hash = coalesce($5::text, password_hash),
                    updated_at = clock_timestamp()
                where object_id = $1
                returning \(Self.columns)
                """,
                [objectId, changes.username, changes.email != nil, changes.email ?? nil, changes.passwordHash])
        }
        return try rows.first.map(Self.user)
    }

    /// Deletes a user (its sessions go with it: `on delete cascade`); false when there was none.
    func delete(objectId: String) throws -> Bool {
        try pool.query("delete from users where object_id = $1 returning 1", [objectId]).count == 1
    }

    private func mappingDuplicates<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as PostgresError {
            if case .server(let state, _, _, let constraint) = error, state == .uniqueViolation {
                if constraint == Self.emailIndex { throw AccountError.emailTaken }
                if constraint == Self.usernameIndex { throw AccountError.usernameTaken }
            }
            throw error
        }
    }

    private static func user(_ row: PostgresRow) throws -> User {
        User(
            objectId: try row.decode(String.self, 0), username: try row.decode(String.self, 1),
            email: try row.decode(String?.self, 2), isAdmin: try row.decode(Bool.self, 3),
            createdAt: try row.decode(Date.self, 4), updatedAt: try row.decode(Date.self, 5))
    }
}
