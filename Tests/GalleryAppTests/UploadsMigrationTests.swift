import Foundation
import Postgres
import Testing

@testable import GalleryApp

/// migrations/0020 on a database with uploads: a file pending before it becomes the master key's
/// upload (its uploader is unknown), with its name, and keeps its bytes from a purge; an attached
/// file has no upload left.
struct UploadsMigrationTests {
    @Test func migration0020_TurnsPendingFilesIntoUploads_AndDropsTheSharedName() throws {
        try MigrationUnderTest.run("0020_uploads_and_reader_sequences.sql") { pool, migrateTheRest in
            for (checksum, pending) in [("aa", true), ("bb", false)] {
                try pool.query(
                    """
                    insert into files (name, key, checksum, original_filename, pending_since, created_at)
                    values ($1 || '.jpg', 'originals/' || $1 || '.jpg', $1, 'holiday-' || $1 || '.jpg',
                            case when $2::boolean then now() - interval '1 hour' end, now() - interval '2 days')
                    """, [checksum, pending])
            }

            try migrateTheRest()

            let uploads = try pool.query("select checksum, uploader_id, original_filename from file_uploads")
            #expect(uploads.count == 1)
            #expect(try uploads.first?.decode(String.self, "checksum") == "aa")
            #expect(try uploads.first?.decode(String?.self, "uploader_id") == nil)
            #expect(try uploads.first?.decode(String.self, "original_filename") == "holiday-aa.jpg")
            let columns = try pool.query(
                "select column_name from information_schema.columns where table_name = 'files' and column_name in ('pending_since', 'original_filename')"
            )
            #expect(columns.count == 0)
            // The file pending an hour is not an orphan within a day's grace; the attached one, without a photo, is.
            #expect(try FileRepository(pool: pool).unattachedChecksums(olderThanHours: 24) == ["bb"])
        }
    }
}
