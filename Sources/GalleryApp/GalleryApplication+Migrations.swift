import Foundation
import Postgres

extension GalleryApplication {
    /// A migrator on a pool of its own, for commands that need the schema and nothing else
    /// (`galleryd migrate`): unlike `init`, it opens no blob store (which would create
    /// `storage_dir`, `./.data/blobs` by default, in whatever directory the command runs in),
    /// registers no routes and starts no workers. Shut the pool down when done.
    public static func makeMigrator(configuration: GalleryConfiguration) -> (pool: PostgresPool, migrator: Migrator) {
        let pool = PostgresPool(
            configuration: PostgresPoolConfiguration(
                url: configuration.databaseURL, size: 1,
                acquireTimeout: Double(configuration.poolTimeoutMs) / 1000,
                statementTimeout: Double(configuration.statementTimeoutMs) / 1000))
        let migrator = Migrator(
            pool: pool, directory: URL(fileURLWithPath: migrationsDirectory(configured: configuration.migrationsDir)))
        return (pool, migrator)
    }

    /// The migrations directory: the configured one, `GALLERYD_MIGRATIONS_DIR`, or the first
    /// `migrations/` holding `0001_initial.sql` that `ResourceDirectory` finds.
    static func migrationsDirectory(configured: String) -> String {
        if configured.isEmpty, let env = ProcessInfo.processInfo.environment["GALLERYD_MIGRATIONS_DIR"], !env.isEmpty {
            return env
        }
        return ResourceDirectory.find("migrations", marker: "0001_initial.sql", configured: configured)
    }
}
