import Foundation
import Postgres
import Testing

@testable import GalleryApp

/// A scratch database migrated up to just before one migration, for a test of what that
/// migration does to data written under the old schema (GalleryMigrationTests, UploadsMigrationTests).
enum MigrationUnderTest {
    /// Creates a database (holding the cluster's shared lock), applies every migration before
    /// `file`, and runs `body` with its pool and a call that applies `file` and all after it.
    /// The database is dropped afterwards, whether `body` passes or throws.
    static func run(
        _ file: String,
        _ body: (_ pool: PostgresPool, _ migrateTheRest: () throws -> Void) throws -> Void
    ) throws {
        let lock = try TestServer.lockClusterShared()
        defer { close(lock) }
        let database = try TestServer.makeDatabase(prefix: "galleryd_migration")
        defer { TestServer.dropDatabase(database.name, admin: database.admin) }
        let pool = PostgresPool(configuration: PostgresPoolConfiguration(url: database.url, size: 2))
        defer { pool.shutdown() }
        let all = try Migration.load(from: URL(fileURLWithPath: GalleryApplication.migrationsDirectory(configured: "")))
        let migration = try #require(all.first { $0.file == file }, "no migration \(file)")
        try Migrator(pool: pool, migrations: all.filter { $0.version < migration.version }).migrate()
        try body(pool) { try Migrator(pool: pool, migrations: all).migrate() }
    }
}
