import Foundation

/// Applies `migrations/NNNN_name.sql` files in order, each in its own transaction, and records them
/// in `schema_migrations(version, name, checksum, applied_at)` (in the session's `search_path`).
///
/// Runs under a session advisory lock, so instances starting together apply each file once. An
/// applied file whose SHA-256 changed is refused (`migrationChanged`) before anything new is applied.
/// Checksums are computed by the database (`sha256()`), so this module needs no crypto library.
public final class Migrator: Sendable {
    /// The `pg_advisory_lock` key: the bytes of "galleryd" as a bigint.
    public static let advisoryLockKey: Int64 = 0x6761_6C6C_6572_7964

    private let pool: PostgresPool
    private let source: @Sendable () throws -> [Migration]

    /// Migrates with the files in `directory`, read afresh on every call.
    public init(pool: PostgresPool, directory: URL) {
        self.pool = pool
        source = { try Migration.load(from: directory) }
    }

    /// Migrates with the files in the directory at `path`.
    public convenience init(pool: PostgresPool, directory path: String) {
        self.init(pool: pool, directory: URL(fileURLWithPath: path, isDirectory: true))
    }

    /// Migrates with a fixed list (e.g. compiled into the binary).
    public init(pool: PostgresPool, migrations: [Migration]) {
        self.pool = pool
        let sorted = migrations.sorted { $0.version < $1.version }
        source = { sorted }
    }

    /// Applies every migration not yet applied and returns their file names, in order; `[]` when the
    /// schema was current. Throws `migrationChanged` for an edited applied file and `migrationFailed`
    /// (with the server's error) for a file that does not apply; files before it stay applied.
    @discardableResult
    public func migrate() throws -> [String] {
        let migrations = try source()
        return try pool.withConnection { connection in
            // A fresh session would not hold the lock: never re-run a statement on one.
            let reconnects = connection.reconnectsOnFailure
            connection.reconnectsOnFailure = false
            defer { connection.reconnectsOnFailure = reconnects }
            try connection.query("select pg_advisory_lock($1)", [Self.advisoryLockKey])
            defer { _ = try? connection.query("select pg_advisory_unlock($1)", [Self.advisoryLockKey]) }

            try connection.execute(
                """
                create table if not exists schema_migrations (
                    version bigint primary key,
                    name text not null,
                    checksum text not null,
                    applied_at timestamptz not null default now()
                )
                """)
            let applied = try appliedRecords(connection)
            let checksums = try self.checksums(of: migrations, connection)
            var pending: [(Migration, String)] = []
            for (migration, checksum) in zip(migrations, checksums) {
                if let record = applied[migration.version] {
                    guard record.checksum == checksum else {
                        throw PostgresError.migrationChanged(
                            file: migration.file, recorded: record.checksum, current: checksum)
                    }
                } else {
                    pending.append((migration, checksum))
                }
            }
            var done: [String] = []
            for (migration, checksum) in pending {
                do {
                    try connection.transaction { connection in
                        try connection.execute(migration.sql)
                        try connection.query(
                            "insert into schema_migrations (version, name, checksum) values ($1, $2, $3)",
                            [migration.version, migration.name, checksum])
                    }
                } catch let error as PostgresError {
                    throw PostgresError.migrationFailed(file: migration.file, underlying: error)
                }
                postgresLogger.info("applied migration", metadata: ["file": "\(migration.file)"])
                done.append(migration.file)
            }
            return done
        }
    }

    /// Every migration file and every recorded one, by version, with whether and when it was applied.
    public func status() throws -> [MigrationStatus] {
        let migrations = try source()
        return try pool.withConnection { connection in
            let applied = try tableExists(connection) ? try appliedRecords(connection) : [:]
            let checksums = try self.checksums(of: migrations, connection)
            var statuses: [MigrationStatus] = []
            for (migration, checksum) in zip(migrations, checksums) {
                let record = applied[migration.version]
                statuses.append(
                    MigrationStatus(
                        version: migration.version, name: migration.name, applied: record != nil,
                        appliedAt: record?.appliedAt,
                        changed: record.map { $0.checksum != checksum } ?? false, missingFile: false))
            }
            for (version, record) in applied where !migrations.contains(where: { $0.version == version }) {
                statuses.append(
                    MigrationStatus(
                        version: version, name: record.name, applied: true, appliedAt: record.appliedAt, changed: false,
                        missingFile: true))
            }
            return statuses.sorted { $0.version < $1.version }
        }
    }

    /// Whether every migration is applied and unchanged (for `/ready`).
    public func isCurrent() throws -> Bool {
        try status().allSatisfy { $0.applied && !$0.changed }
    }

    // MARK: Internals

    private struct Record {
        let name: String
        let checksum: String
        let appliedAt: Date
    }

    private func tableExists(_ connection: PostgresConnection) throws -> Bool {
        try connection.query("select to_regclass('schema_migrations') is not null as present", retry: .safe)[0].decode(
            Bool.self, "present")
    }

    private func appliedRecords(_ connection: PostgresConnection) throws -> [Int: Record] {
        var records: [Int: Record] = [:]
        for row in try connection.query(
            "select version, name, checksum, applied_at from schema_migrations", retry: .safe)
        {
            records[try row.decode(Int.self, "version")] = Record(
                name: try row.decode(String.self, "name"), checksum: try row.decode(String.self, "checksum"),
                appliedAt: try row.decode(Date.self, "applied_at"))
        }
        return records
    }

    /// SHA-256 (hex) of each migration's UTF-8 text, in order, computed by the server in one round trip.
    private func checksums(of migrations: [Migration], _ connection: PostgresConnection) throws -> [String] {
        guard !migrations.isEmpty else { return [] }
        let result = try connection.query(
            "select encode(sha256(convert_to(sql, 'UTF8')), 'hex') as checksum from unnest($1::text[]) with ordinality as m(sql, n) order by n",
            [migrations.map(\.sql)], retry: .safe)
        return try result.map { try $0.decode(String.self, "checksum") }
    }
}
