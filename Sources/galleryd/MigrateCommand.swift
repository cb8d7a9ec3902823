import ArgumentParser
import Foundation
import GalleryApp

/// `galleryd migrate [--status]`: applies pending migrations, or lists them with their state.
struct MigrateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate", abstract: "Apply pending database migrations.")

    @OptionGroup var options: ConfigOptions
    @Flag(help: "List migrations and whether each is applied, without applying any.") var status = false

    func run() throws {
        var configuration = options.load()
        configuration.workers = 0
        guard !configuration.databaseURL.isEmpty else { fail("config: database_url: not set (DATABASE_URL)") }
        _ = bootstrapLogging(level: configuration.logLevel)
        // Only the database: the blob store is not opened, so no storage directory appears here.
        let (pool, migrator) = GalleryApplication.makeMigrator(configuration: configuration)
        defer { pool.shutdown() }
        do {
            if status {
                for migration in try migrator.status() {
                    let state =
                        migration.appliedAt.map { "applied \(ISO8601DateFormatter().string(from: $0))" } ?? "pending"
                    print(String(format: "%04d", migration.version) + "  \(migration.name)  \(state)")
                }
            } else {
                let applied = try migrator.migrate()
                print(
                    applied.isEmpty
                        ? "migrations: up to date" : "migrations: applied \(applied.joined(separator: ", "))")
            }
        } catch {
            fail("migrate: \(error)", code: 1)
        }
    }
}
