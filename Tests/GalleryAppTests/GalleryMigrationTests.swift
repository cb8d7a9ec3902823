import Foundation
import Postgres
import Testing

@testable import GalleryApp

/// migrations/0003_galleries.sql on a database that already has galleries: counts made with the
/// old rule and holes left by cascades are repaired, and the new triggers take over.
@Suite struct GalleryMigrationTests {
    @Test func migration0003_RecountsLivePhotosAndClosesPositionGaps_InExistingData() throws {
        try MigrationUnderTest.run("0003_galleries.sql") { pool, migrateTheRest in
            // Before 0003: items of a trashed photo are counted, and deleting a photo leaves a hole.
            for (id, deleted) in [
                ("photoAAAAA", false), ("photoBBBBB", true), ("photoCCCCC", false), ("photoDDDDD", false),
            ] {
                try pool.query(
                    """
                    insert into photos (object_id, filename, byte_size, checksum, width, height, aspect_ratio, original_key, deleted_at)
                    values ($1, 'f.jpg', 1, $1, 1, 1, 1, 'originals/x.jpg', case when $2::boolean then now() end)
                    """, [id, deleted])
            }
            try pool.query("insert into galleries (object_id, name) values ('galleryAAA', 'A')")
            for (index, photo) in ["photoAAAAA", "photoBBBBB", "photoCCCCC", "photoDDDDD"].enumerated() {
                try pool.query(
                    "insert into gallery_items (object_id, gallery_id, photo_id, position) values ($1, 'galleryAAA', $2, $3)",
                    ["item\(index)xxxxx", photo, index])
            }
            try pool.query("delete from photos where object_id = 'photoCCCCC'")
            let before = try pool.query("select photo_count from galleries").first!.decode(Int.self, "photo_count")
            #expect(before == 3)  // the old rule: every remaining item, the trashed photo's too

            try migrateTheRest()

            let positions = try pool.query("select photo_id, position from gallery_items order by position")
                .map { "\(try $0.decode(String.self, "photo_id"))@\(try $0.decode(Int.self, "position"))" }
            #expect(positions == ["photoAAAAA@0", "photoBBBBB@1", "photoDDDDD@2"])
            #expect(try pool.query("select photo_count from galleries").first!.decode(Int.self, "photo_count") == 2)
            // From now on the triggers keep it: restoring B counts it, deleting A closes the gap.
            try pool.query("update photos set deleted_at = null where object_id = 'photoBBBBB'")
            #expect(try pool.query("select photo_count from galleries").first!.decode(Int.self, "photo_count") == 3)
            try pool.query("delete from photos where object_id = 'photoAAAAA'")
            let after = try pool.query("select photo_id, position from gallery_items order by position")
                .map { "\(try $0.decode(String.self, "photo_id"))@\(try $0.decode(Int.self, "position"))" }
            #expect(after == ["photoBBBBB@0", "photoDDDDD@1"])
            #expect(try pool.query("select photo_count from galleries").first!.decode(Int.self, "photo_count") == 2)
        }
    }
}
