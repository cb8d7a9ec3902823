import Foundation
@_exported import GalleryTestSupport
import Testing

@testable import Postgres

/// The PostgreSQL the tests run against (`DATABASE_URL`, set by `make test`), with a fresh schema
/// per test so tests and suites never see each other's tables.
enum TestDatabase {
    /// `DATABASE_URL`; the test fails (not skips) without it.
    static func url() throws -> String {
        try TestEnvironment.databaseURL()
    }

    /// The command that controls the test cluster (`… restart`), from `GALLERYD_TEST_PGCTL`.
    static func controlCommand() throws -> String {
        try TestEnvironment.clusterControlCommand()
    }

    /// btree_gin installed in public, once per test process (two sessions creating it at once
    /// would collide on its name).
    private static let publicExtensions: Result<Void, any Error> = Result {
        let admin = try PostgresConnection(url: try url())
        try admin.execute("create extension if not exists btree_gin with schema public")
    }

    /// Creates an empty schema, runs `body` with a URL whose sessions use it (`search_path`), then
    /// drops it. Holds the cluster lock shared, so a test restarting the server waits for it.
    static func withSchema<T>(_ prefix: String = "t", _ body: (String) throws -> T) throws -> T {
        let base = try url()
        return try ClusterLock.shared {
            let schema = "\(prefix)_\(UInt32.random(in: 0...UInt32.max))"
            let admin = try PostgresConnection(url: base)
            // Extensions are database-wide but live in one schema: a migration's `create extension
            // if not exists btree_gin` (0016) run first in a test schema would put it there, and
            // dropping that schema would take it from under every other test's indexes ("cache
            // lookup failed for function"). Installed in public first, the migrations find it.
            try publicExtensions.get()
            try admin.execute("drop schema if exists \(schema) cascade; create schema \(schema)")
            defer { try? admin.execute("drop schema if exists \(schema) cascade") }
            return try body(withSearchPath(base, schema))
        }
    }

    /// `url` with `search_path` set to `schema` for every session, as a URL or conninfo option.
    static func withSearchPath(_ url: String, _ schema: String) -> String {
        if url.hasPrefix("postgres://") || url.hasPrefix("postgresql://") {
            return url + (url.contains("?") ? "&" : "?") + "options=-csearch_path%3D\(schema)"
        }
        return url + " options='-csearch_path=\(schema)'"
    }

    /// A pool on `url` with test-friendly limits.
    static func pool(_ url: String, size: Int = 4, acquireTimeout: Double = 30) -> PostgresPool {
        PostgresPool(configuration: PostgresPoolConfiguration(url: url, size: size, acquireTimeout: acquireTimeout))
    }

    /// The repository's `migrations/` directory.
    static var migrationsDirectory: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
            .appendingPathComponent("migrations", isDirectory: true)
    }

    /// Runs the cluster control command with `argument` (`restart`, `start`, `status`); returns its exit status.
    /// Uses `posix_spawn` and `waitpid`: Foundation's `Process` waits for pipes that the started
    /// postmaster inherits, so it would never return after `start` or `restart`.
    @discardableResult
    static func control(_ argument: String) throws -> Int32 {
        let command = "\(try controlCommand()) \(argument) </dev/null >/dev/null 2>&1"
        var pid: pid_t = 0
        let strings: [String] = ["/bin/sh", "-c", command]
        var arguments: [UnsafeMutablePointer<CChar>?] = strings.map { strdup($0) }
        arguments.append(nil)
        defer { for argument in arguments { free(argument) } }
        let spawned = posix_spawn(&pid, "/bin/sh", nil, nil, arguments, environ)
        try #require(spawned == 0, "cannot run the cluster control command: \(spawned)")
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            try #require(errno == EINTR, "waitpid failed: \(errno)")
        }
        // WIFEXITED / WEXITSTATUS
        return (status & 0x7f) == 0 ? (status >> 8) & 0xff : -1
    }

    /// Terminates `pid`'s backend through `killer` and returns once it has exited (its goodbye
    /// sent), not after a fixed time a busy machine may exceed.
    static func terminate(_ pid: Int, using killer: PostgresConnection) throws {
        _ = try killer.query("select pg_terminate_backend($1::int)", [pid])
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline, try killer.query("select 1 from pg_stat_activity where pid = $1::int", [pid]).count > 0
        {
            usleep(5_000)
        }
    }
}
