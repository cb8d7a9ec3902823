import Foundation
import Postgres

@testable import GalleryApp

/// A database migrated once per test process, which each `TestServer` copies with
/// `CREATE DATABASE … TEMPLATE`: a fresh, isolated database per test without running every
/// migration again for each (the copy is a file copy; the migrations are a few hundred statements).
/// Nothing ever connects to it after its migration, as PostgreSQL requires of a template.
enum MigratedTemplate {
    /// The template's name, made on first use.
    private static let made: Result<String, any Error> = Result { try make() }

    /// A new database copied from the template: its name, its URL, and the URL that drops it.
    static func copy(prefix: String = "galleryd_test") throws -> (name: String, url: String, admin: String) {
        let template = try made.get()
        let admin = try TestEnvironment.databaseURL()
        let name = "\(prefix)_\(UInt32.random(in: 0...UInt32.max))"
        let connection = try PostgresConnection(url: admin)
        try connection.execute("create database \(name) template \(template)")
        return (name, ScratchDatabase.url(admin, database: name), admin)
    }

    /// Creates an empty database and applies every migration to it.
    private static func make() throws -> String {
        let database = try ScratchDatabase(prefix: "galleryd_template")
        var configuration = GalleryConfiguration()
        configuration.databaseURL = database.url
        let (pool, migrator) = GalleryApplication.makeMigrator(configuration: configuration)
        defer { pool.shutdown() }
        try migrator.migrate()
        return database.name
    }
}
