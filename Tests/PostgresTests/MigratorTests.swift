import Foundation
import Testing

@testable import Postgres

/// Migrations from generated directories: order, idempotence, edits, concurrency, failures.
@Suite struct MigratorTests {
    /// A temporary directory holding `files` (name → SQL), removed by the caller.
    private func directory(_ files: [String: String]) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "galleryd-migrations-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        for (name, sql) in files {
            try sql.write(to: url.appendingPathComponent(name), atomically: true, encoding: .utf8)
        }
        return url
    }

    private let files = [
        "0001_first.sql": "create table a (i int); insert into a values (1);",
        "0002_second.sql": "alter table a add column j int; -- 🙂 non-ASCII comment\ninsert into a values (2, 2);",
        "0010_third.sql": "create table c (k text primary key);",
        "README.md": "not a migration",
    ]

    @Test func migrate_AppliesInOrder_ThenIsANoOp() throws {
        try TestDatabase.withSchema { url in
            let dir = try directory(files)
            defer { try? FileManager.default.removeItem(at: dir) }
            let pool = TestDatabase.pool(url)
            let migrator = Migrator(pool: pool, directory: dir)
            #expect(try migrator.isCurrent() == false)
            #expect(try migrator.status().map(\.applied) == [false, false, false])

            #expect(try migrator.migrate() == ["0001_first.sql", "0002_second.sql", "0010_third.sql"])
            #expect(try migrator.migrate() == [])
            #expect(try migrator.isCurrent())
            #expect(try pool.query("select count(*) from a")[0].decode(Int.self, 0) == 2)

            let status = try migrator.status()
            #expect(status.map(\.version) == [1, 2, 10])
            #expect(status.map(\.name) == ["first", "second", "third"])
            #expect(status.allSatisfy { $0.applied && $0.appliedAt != nil && !$0.changed })
            let checksum = try pool.query("select checksum from schema_migrations where version = 1")[0].decode(
                String.self, 0)
            // sha256 of the file's bytes, as `sha256sum` prints it.

            #expect(checksum.count == 64 && checksum.allSatisfy { $0.isHexDigit })
        }
    }

    @Test func migrate_RefusesEditedMigration_NamingTheFile() throws {
        try TestDatabase.withSchema { url in
            let dir = try directory(files)
            defer { try? FileManager.default.removeItem(at: dir) }
            let migrator = Migrator(pool: TestDatabase.pool(url), directory: dir)
            try migrator.migrate()
            try "create table a (i bigint);".write(
                to: dir.appendingPathComponent("0001_first.sql"), atomically: true, encoding: .utf8)
            try "create table d (i int);".write(
                to: dir.appendingPathComponent("0011_fourth.sql"), atomically: true, encoding: .utf8)
            #expect {
                try migrator.migrate()
            } throws: { error in
                guard case PostgresError.migrationChanged(let file, _, _) = error else { return false }
                return file == "0001_first.sql" && "\(error)".contains("0001_first.sql")
            }
            #expect(try migrator.isCurrent() == false)
            #expect(try migrator.status().first { $0.version == 1 }?.changed == true)
            // Nothing new was applied after the refusal.
            #expect(try migrator.status().first { $0.version == 11 }?.applied == false)
        }
    }

    @Test func migrate_AppliesEachFileOnce_WhenTwoInstancesRunTogether() throws {
        try TestDatabase.withSchema { url in
            var slow = files
            slow["0001_first.sql"] = "select pg_sleep(0.3); create table a (i int); insert into a values (1);"
            let dir = try directory(slow)
            defer { try? FileManager.default.removeItem(at: dir) }
            let applied = Locked([String]())
            let errors = Locked([String]())
            let group = DispatchGroup()
            for _ in 0..<2 {
                DispatchQueue.global().async(group: group) {
                    do {
                        let names = try Migrator(pool: TestDatabase.pool(url), directory: dir).migrate()
                        applied.withValue { $0 += names }
                    } catch {
                        errors.withValue { $0.append("\(error)") }
                    }
                }
            }
            group.wait()
            #expect(errors.current == [])
            #expect(applied.current.sorted() == ["0001_first.sql", "0002_second.sql", "0010_third.sql"])
            let pool = TestDatabase.pool(url)
            #expect(try pool.query("select count(*) from schema_migrations")[0].decode(Int.self, 0) == 3)
            #expect(try pool.query("select count(*) from a")[0].decode(Int.self, 0) == 2)
        }
    }

    @Test func migrate_RollsBackFailingFile_AndKeepsEarlierOnes() throws {
        try TestDatabase.withSchema { url in
            let dir = try directory([
                "0001_ok.sql": "create table ok (i int);",
                "0002_bad.sql": "create table half (i int); select no_such_function();",
            ])
            defer { try? FileManager.default.removeItem(at: dir) }
            let pool = TestDatabase.pool(url)
            let migrator = Migrator(pool: pool, directory: dir)
            #expect {
                try migrator.migrate()
            } throws: { error in
                guard case PostgresError.migrationFailed(let file, let underlying) = error else { return false }
                return file == "0002_bad.sql" && underlying.sqlState == .undefinedFunction
            }
            #expect(try migrator.status().map(\.applied) == [true, false])
            #expect(try pool.query("select to_regclass('half') is null as gone")[0].decode(Bool.self, 0))
        }
    }

    @Test func load_RejectsBadNamesAndDuplicateVersions() throws {
        let badName = try directory(["1_short.sql": "select 1;"])
        let duplicate = try directory(["0001_a.sql": "select 1;", "0001_b.sql": "select 2;"])
        defer {
            try? FileManager.default.removeItem(at: badName)
            try? FileManager.default.removeItem(at: duplicate)
        }
        #expect(throws: PostgresError.self) { try Migration.load(from: badName) }
        #expect(throws: PostgresError.self) { try Migration.load(from: duplicate) }
        #expect(Migration.parse(fileName: "0001_initial.sql")! == (1, "initial"))
        #expect(Migration(version: 7, name: "x", sql: "").file == "0007_x.sql")
    }
}
