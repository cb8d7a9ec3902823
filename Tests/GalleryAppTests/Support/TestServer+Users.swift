import Foundation

@testable import GalleryApp

/// Accounts for tests, made straight in SQL until the account routes exist: a `users` row and a
/// live `sessions` row whose `token_hash` is `SessionToken(token).hash`. Switch `makeUser` to
/// `POST /parse/users` (sign-up) once it exists; the tests only use the returned token and id.
struct TestUser {
    let objectId: String
    let token: String

    /// The header that makes a request this user's.
    var headers: [String: String] { ["X-Parse-Session-Token": token] }
}

extension TestServer {
    /// A user (an admin with `admin`) with a session valid for an hour.
    func makeUser(_ username: String, admin: Bool = false) throws -> TestUser {
        let user = TestUser(objectId: ParseObjectID.generate(), token: SessionToken.random().value)
        try application.pool.query(
            "insert into users (object_id, username, password_hash, is_admin) values ($1, $2, 'test-no-password', $3)",
            [user.objectId, username, admin])
        try application.pool.query(
            """
            insert into sessions (object_id, token_hash, user_id, created_with, expires_at)
            values ($1, $2, $3, 'login', clock_timestamp() + interval '1 hour')
            """, [ParseObjectID.generate(), SessionToken(user.token).hash, user.objectId])
        return user
    }

    /// Inserts `count` ready photo rows owned by `owner` (nil: ownerless), no blobs: fast for tests
    /// that only need ids. Goes through the same triggers as an upload (counters, change sequences).
    func insertPhotos(_ count: Int, owner: String?) throws -> [String] {
        var ids: [String] = []
        for _ in 0..<count {
            let id = ParseObjectID.generate()
            let checksum = (0..<4).map { _ in String(format: "%016llx", UInt64.random(in: 0...UInt64.max)) }.joined()
            try application.pool.query(
                """
                insert into photos (object_id, filename, byte_size, checksum, width, height, aspect_ratio, original_key, status, owner_id)
                values ($1, $2, 1000, $3, 400, 300, 1.3333333333333333, $4, 'ready', $5)
                """, [id, "row-\(id).jpg", checksum, "originals/\(checksum).jpg", owner])
            ids.append(id)
        }
        return ids
    }
}
