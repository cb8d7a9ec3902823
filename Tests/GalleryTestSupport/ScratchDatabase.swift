import Foundation
import Postgres

/// A fresh database for one test, made from `DATABASE_URL` (`TestEnvironment`) and dropped after.
public struct ScratchDatabase: Sendable {
    /// Its name, `<prefix>_<random>`.
    public let name: String
    /// Its URL.
    public let url: String
    /// The URL it was made from, which drops it.
    public let admin: String

    /// Creates the database.
    public init(prefix: String = "galleryd_test") throws {
        admin = try TestEnvironment.databaseURL()
        name = "\(prefix)_\(UInt32.random(in: 0...UInt32.max))"
        let connection = try PostgresConnection(url: admin)
        try connection.execute("create database \(name)")
        url = Self.url(admin, database: name)
    }

    /// Drops it, whoever is still connected.
    public func drop() { Self.drop(name, admin: admin) }

    /// `url` with its database name replaced.
    public static func url(_ url: String, database: String) -> String {
        var components = URLComponents(string: url)!
        components.path = "/" + database
        return components.string!
    }

    /// Drops the database `name`, whoever is still connected.
    public static func drop(_ name: String, admin: String) {
        guard let connection = try? PostgresConnection(url: admin) else { return }
        try? connection.execute("drop database if exists \(name) with (force)")
    }
}
