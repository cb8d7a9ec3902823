import Foundation
import Testing

@testable import Postgres

/// migrations/0001_initial.sql: it applies, and its triggers keep counters and timestamps right.
@Suite struct InitialSchemaTests {
    private func count(_ pool: PostgresPool, _ name: String) throws -> Int {
        try pool.query("select n from row_counts where name = $1", [name])[0].decode(Int.self, "n")
    }

    private func insertPhoto(_ connection: PostgresConnection, _ id: String, title: String = "", tags: [String] = [])
        throws
    {
        try connection.query(
            """
            insert into photos (object_id, filename, title, tags, byte_size, checksum, width, height, aspect_ratio, original_key)
            values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
            """,
            [id, "\(id).jpg", title, tags, 1000, "sum-\(id)", 4000, 3000, 4.0 / 3, "originals/\(id).jpg"])
    }

    @Test func initialMigration_Applies_AndPhotoCountersFollowTrashRestoreDelete() throws {
        try TestDatabase.withSchema { url in
            let pool = TestDatabase.pool(url)
            let migrator = Migrator(pool: pool, directory: TestDatabase.migrationsDirectory)
            #expect(try migrator.migrate().first == "0001_initial.sql")
            #expect(try migrator.isCurrent())

            try pool.transaction { connection in
                for id in ["p000000001", "p000000002", "p000000003"] { try insertPhoto(connection, id) }
            }
            #expect(try count(pool, "photos_live") == 3)
            #expect(try count(pool, "photos_trashed") == 0)

            try pool.query(
                "update photos set deleted_at = now() where object_id = any($1)", [["p000000001", "p000000002"]])
            #expect(try count(pool, "photos_live") == 1)
            #expect(try count(pool, "photos_trashed") == 2)

            // Setting deleted_at again, or changing other columns, moves nothing.
            try pool.query("update photos set deleted_at = now(), title = $1", ["x"])
            #expect(try count(pool, "photos_live") == 0)
            #expect(try count(pool, "photos_trashed") == 3)

            try pool.query("update photos set deleted_at = null where object_id = $1", ["p000000002"])
            #expect(try count(pool, "photos_live") == 1)
            #expect(try count(pool, "photos_trashed") == 2)

            try pool.query("delete from photos where object_id in ($1, $2)", ["p000000001", "p000000002"])
            #expect(try count(pool, "photos_live") == 0)
            #expect(try count(pool, "photos_trashed") == 1)
            #expect(try pool.query("select count(*) from photos where deleted_at is null")[0].decode(Int.self, 0) == 0)
        }
    }

    @Test func galleryCounters_FollowItemsAndTrash() throws {
        try TestDatabase.withSchema { url in
            let pool = TestDatabase.pool(url)
            try Migrator(pool: pool, directory: TestDatabase.migrationsDirectory).migrate()
            try pool.transaction { connection in
                for id in ["p000000001", "p000000002", "p000000003"] { try insertPhoto(connection, id) }
                try connection.query(
                    "insert into galleries (object_id, name) values ($1, $2), ($3, $4)",
                    ["g000000001", "Trip", "g000000002", "Other"])
                try connection.query(
                    "insert into gallery_items (object_id, gallery_id, photo_id, position) select 'i' || p, $1, 'p00000000' || p, p - 1 from generate_series(1, 3) p",
                    ["g000000001"])
            }
            func photoCount(_ gallery: String) throws -> Int {
                try pool.query("select photo_count from galleries where object_id = $1", [gallery])[0].decode(
                    Int.self, 0)
            }
            #expect(try photoCount("g000000001") == 3)
            #expect(try count(pool, "galleries_live") == 2)

            // Deleting a photo cascades to its item.
            try pool.query("delete from photos where object_id = $1", ["p000000002"])
            #expect(try photoCount("g000000001") == 2)

            // Moving an item to another gallery.
            try pool.query(
                "update gallery_items set gallery_id = $1, position = 0 where object_id = $2", ["g000000002", "i3"])
            #expect(try photoCount("g000000001") == 1)
            #expect(try photoCount("g000000002") == 1)

            // Positions may collide inside a transaction (deferred unique), not after it.
            try pool.transaction { connection in
                try connection.query(
                    "insert into gallery_items (object_id, gallery_id, photo_id, position) values ($1, $2, $3, $4)",
                    ["i9", "g000000002", "p000000001", 0])
                try connection.query("update gallery_items set position = 1 where object_id = $1", ["i3"])
            }
            #expect {
                try pool.query("update gallery_items set position = 0 where object_id = $1", ["i3"])
            } throws: { ($0 as? PostgresError)?.sqlState == .uniqueViolation }

            try pool.query("update galleries set deleted_at = now() where object_id = $1", ["g000000002"])
            #expect(try count(pool, "galleries_live") == 1)
            #expect(try count(pool, "galleries_trashed") == 1)
            try pool.query("delete from galleries where object_id = $1", ["g000000002"])
            #expect(try count(pool, "galleries_trashed") == 0)
            #expect(
                try pool.query("select count(*) from gallery_items where gallery_id = $1", ["g000000002"])[0].decode(
                    Int.self, 0) == 0)
        }
    }

    @Test func updatedAt_ChangesOnUpdate_AndSearchFindsTitleAndTags() throws {
        try TestDatabase.withSchema { url in
            let pool = TestDatabase.pool(url)
            try Migrator(pool: pool, directory: TestDatabase.migrationsDirectory).migrate()
            try pool.withConnection {
                try insertPhoto($0, "p000000001", title: "Sunset at the beach", tags: ["holiday", "Küste"])
            }
            let before = try pool.query("select created_at, updated_at from photos")[0]
            #expect(try before.decode(Date.self, "created_at") == (try before.decode(Date.self, "updated_at")))
            usleep(20_000)
            try pool.query("update photos set title = $1", ["Sunrise"])
            let after = try pool.query("select updated_at from photos")[0].decode(Date.self, "updated_at")
            #expect(try after > before.decode(Date.self, "updated_at"))
            // Milliseconds only, like Parse dates.
            let seconds = after.timeIntervalSince1970 * 1000
            #expect(abs(seconds - seconds.rounded()) < 0.001)

            let explicit = Date(timeIntervalSince1970: 1_600_000_000)
            try pool.query("update photos set updated_at = $1", [explicit])
            #expect(try pool.query("select updated_at from photos")[0].decode(Date.self, 0) == explicit)

            let search = "select count(*) from photos where search @@ plainto_tsquery('simple', $1)"
            #expect(try pool.query(search, ["sunrise"])[0].decode(Int.self, 0) == 1)
            #expect(try pool.query(search, ["küste"])[0].decode(Int.self, 0) == 1)
            #expect(try pool.query(search, ["sunset"])[0].decode(Int.self, 0) == 0)
            #expect(
                try pool.query("select count(*) from photos where tags @> $1", [["holiday"]])[0].decode(Int.self, 0)
                    == 1)
        }
    }

    @Test func photos_RejectInvalidStatusAndDuplicateChecksum() throws {
        try TestDatabase.withSchema { url in
            let pool = TestDatabase.pool(url)
            try Migrator(pool: pool, directory: TestDatabase.migrationsDirectory).migrate()
            try pool.withConnection { try insertPhoto($0, "p000000001") }
            #expect { try pool.query("update photos set status = $1", ["weird"]) } throws: {
                ($0 as? PostgresError)?.sqlState == .checkViolation
            }
            #expect {
                try pool.query(
                    "insert into photos (object_id, filename, byte_size, checksum, width, height, aspect_ratio, original_key) values ($1, $2, $3, $4, $5, $6, $7, $8)",
                    ["p000000002", "b.jpg", 1, "sum-p000000001", 1, 1, 1.0, "k"])
            } throws: { error in
                guard case PostgresError.server(.uniqueViolation, _, _, let constraint) = error else { return false }
                // One photo per bytes per owner since 0014 (ownerless rows, as here, count as one owner).
                return constraint == "photos_owner_checksum_key"
            }
        }
    }
}
