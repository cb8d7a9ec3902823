import Foundation
import Postgres
import Testing

@testable import GalleryApp

/// The statements moved out of routes and services into `Repositories/` (#12): each against the
/// real PostgreSQL in a database of its own.
@Suite(.serialized) struct RepositoryTests {
    @Test func requestIds_RecordAnAnswer_ReplaceIt_AndForgetItOnceExpired() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let records = RequestIdRepository(pool: server.application.pool)
        let first = ParseRequestIdempotency.recordKey(scope: "POST /x", requestId: "first")
        let old = ParseRequestIdempotency.recordKey(scope: "POST /x", requestId: "old")
        #expect(try records.answer(for: first) == nil)
        let created = RequestIdRepository.Answer(
            status: 201, reason: "Created", json: Array(#"{"objectId":"a1"}"#.utf8), location: "/x/a1")
        try records.record(created, for: first, ttl: 300)
        #expect(try records.answer(for: first) == created)
        // Recorded again (after an expiry): the newer answer replaces it, a nil location included.
        let again = RequestIdRepository.Answer(status: 200, reason: "OK", json: Array("{}".utf8), location: nil)
        try records.record(again, for: first, ttl: 300)
        #expect(try records.answer(for: first) == again)
        // Expired: no longer answered, and deleted by the cleanup while the live one stays.
        try records.record(created, for: old, ttl: -1)
        #expect(try records.answer(for: old) == nil)
        let count = { (key: String) in
            try server.application.pool.query("select count(*) from request_ids where key = $1", [key]).first!.decode(
                Int64.self, 0)
        }
        #expect(try count(old) == 1)
        try records.deleteExpired()
        #expect(try count(old) == 0)
        #expect(try count(first) == 1)
        // The advisory lock is transaction-scoped: taken and released with the transaction.
        try server.application.pool.sharingTransaction { try records.lock(first) }
        try server.application.pool.sharingTransaction { try records.lock(first) }
    }

    @Test func orphanStatements_FindUnattachedFilesPastTheGrace_AndWhichPhotosExist() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let pool = server.application.pool
        func file(_ checksum: String, pendingHoursAgo: Int?, createdHoursAgo: Int) throws {
            try pool.query(
                """
                insert into files (name, key, checksum, created_at)
                values ($1 || '.jpg', 'originals/' || $1 || '.jpg', $1, now() - make_interval(hours => $2::int))
                """, [checksum, createdHoursAgo])
            if let pendingHoursAgo {
                try pool.query(
                    """
                    insert into file_uploads (checksum, original_filename, uploaded_at)
                    values ($1, 'u.jpg', now() - make_interval(hours => $2::int))
                    """, [checksum, pendingHoursAgo])
            }
        }
        try file("aa", pendingHoursAgo: 30, createdHoursAgo: 30)  // pending past the grace
        try file("bb", pendingHoursAgo: 2, createdHoursAgo: 30)  // pending, re-uploaded lately
        try file("cc", pendingHoursAgo: nil, createdHoursAgo: 40)  // attached once, its photo gone
        try file("dd", pendingHoursAgo: nil, createdHoursAgo: 40)  // attached to a photo
        try pool.query(
            """
            insert into photos (object_id, filename, content_type, byte_size, checksum, width, height, aspect_ratio, original_key, status)
            values ('Photo00001', 'd.jpg', 'image/jpeg', 1, 'dd', 1, 1, 1.0, 'originals/dd.jpg', 'pending')
            """)
        let files = FileRepository(pool: pool)
        #expect(try files.unattachedChecksums(olderThanHours: 24) == ["aa", "cc"])
        #expect(try files.unattachedChecksums(olderThanHours: 1) == ["aa", "bb", "cc"])
        #expect(try files.unattachedChecksums(olderThanHours: 100) == [])

        let photos = PhotoRepository(pool: pool)
        #expect(try photos.existingIds(among: ["Photo00001", "Photo00002"]) == ["Photo00001"])
        #expect(try photos.existingIds(among: []) == [])

        // Every blob a row names, once, sorted: the storage migration's list.
        #expect(
            try BlobReferenceRepository(pool: pool).allKeys() == [
                "originals/aa.jpg", "originals/bb.jpg", "originals/cc.jpg", "originals/dd.jpg",
            ])
        try pool.query(
            "update photos set thumbnail_key = 'thumbnails/Photo00001.jpg', preview_key = 'previews/Photo00001.jpg'")
        #expect(
            try BlobReferenceRepository(pool: pool).allKeys() == [
                "originals/aa.jpg", "originals/bb.jpg", "originals/cc.jpg", "originals/dd.jpg",
                "previews/Photo00001.jpg", "thumbnails/Photo00001.jpg",
            ])
    }

    @Test func health_PingAnswers_AndThrowsWhenTheDatabaseIsUnreachable() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        try HealthRepository(pool: server.application.pool).ping()
        // Nothing listens on port 1.
        let nowhere = PostgresPool(
            configuration: PostgresPoolConfiguration(
                url: "postgresql://galleryd@127.0.0.1:1/none", size: 1, acquireTimeout: 2, connectTimeout: 2))
        #expect(throws: (any Error).self) { try HealthRepository(pool: nowhere).ping() }
    }
}
