import Foundation
import Testing
@testable import Postgres

/// The PostgreSQL the tests run against (`DATABASE_URL`, set by `make test`), with a fresh schema
/// per test so tests and suites never see each other's tables.
enum TestDatabase {
    /// `DATABASE_URL`; the test fails (not skips) without it.
    static func url() throws -> String {
        try #require(
            ProcessInfo.processInfo.environment["DATABASE_URL"].flatMap { $0.isEmpty ? nil : $0 },
            "DATABASE_URL must point at a PostgreSQL database (make test starts one)")
    }

    /// The command that controls the test cluster (`… restart`), from `GALLERYD_TEST_PGCTL`.
    static func controlCommand() throws -> String {
        try #require(
            ProcessInfo.processInfo.environment["GALLERYD_TEST_PGCTL"].flatMap { $0.isEmpty ? nil : $0 },
            "GALLERYD_TEST_PGCTL must be set (make test sets it)")
    }

    /// Creates an empty schema, runs `body` with a URL whose sessions use it (`search_path`), then
    /// drops it. Holds the cluster lock shared, so a test restarting the server waits for it.
    static func withSchema<T>(_ prefix: String = "t", _ body: (String) throws -> T) throws -> T {
        let base = try url()
        return try ClusterLock.shared {
            let schema = "\(prefix)_\(UInt32.random(in: 0...UInt32.max))"
            let admin = try PostgresConnection(url: base)
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
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
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
        defer { arguments.forEach { free($0) } }
        let spawned = posix_spawn(&pid, "/bin/sh", nil, nil, arguments, environ)
        try #require(spawned == 0, "cannot run the cluster control command: \(spawned)")
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            try #require(errno == EINTR, "waitpid failed: \(errno)")
        }
        // WIFEXITED / WEXITSTATUS
        return (status & 0x7f) == 0 ? (status >> 8) & 0xff : -1
    }
}

/// A file lock shared by every database test and taken exclusively by the test that restarts the
/// server, so no other test loses its connection mid-way. The lock file is named after
/// `DATABASE_URL`, so other test targets can take the same lock (`flock` on that path).
enum ClusterLock {
    /// Runs `body` while holding the lock shared.
    static func shared<T>(_ body: () throws -> T) throws -> T { try locked(LOCK_SH, body) }

    /// Runs `body` while holding the lock exclusively.
    static func exclusive<T>(_ body: () throws -> T) throws -> T { try locked(LOCK_EX, body) }

    /// `/tmp/galleryd-test-cluster-<hash of DATABASE_URL>.lock`.
    static func path() throws -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in try TestDatabase.url().utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return "/tmp/galleryd-test-cluster-\(String(hash, radix: 16)).lock"
    }

    private static func locked<T>(_ operation: Int32, _ body: () throws -> T) throws -> T {
        let fd = open(try path(), O_RDWR | O_CREAT | O_CLOEXEC, 0o666)
        try #require(fd >= 0, "cannot open the cluster lock file")
        defer { close(fd) }
        while flock(fd, operation) != 0 {
            try #require(errno == EINTR, "flock failed: \(errno)")
        }
        return try body()
    }
}

/// A thread-safe box for values written from other threads (listener handlers, worker threads).
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    /// Wraps `value`.
    init(_ value: Value) { self.value = value }

    /// Runs `body` with exclusive access to the value.
    func withValue<T>(_ body: (inout Value) -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }

    /// A copy of the value now.
    var current: Value { withValue { $0 } }
}
