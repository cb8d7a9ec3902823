import Foundation

/// One schema change: `migrations/NNNN_name.sql`, applied once, in version order.
public struct Migration: Sendable, Equatable {
    /// The number the file name starts with; migrations apply in ascending order.
    public let version: Int
    /// The part of the file name after the number, e.g. `initial`.
    public let name: String
    /// The SQL, run as one multi-statement string inside a transaction (so no `CREATE INDEX CONCURRENTLY`).
    public let sql: String
    /// The file name, e.g. `0001_initial.sql`.
    public let file: String

    /// A migration from its parts (for migrations compiled into a binary).
    public init(version: Int, name: String, sql: String) {
        self.version = version
        self.name = name
        self.sql = sql
        let digits = String(version)
        file = String(repeating: "0", count: max(0, 4 - digits.count)) + digits + "_" + name + ".sql"
    }

    /// Reads every `NNNN_name.sql` in `directory`, sorted by version. Other `.sql` names, a repeated
    /// version or a file that is not UTF-8 throw `invalidMigration`; non-`.sql` files are ignored.
    public static func load(from directory: URL) throws -> [Migration] {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        } catch {
            throw PostgresError.invalidMigration(
                file: directory.path, reason: "cannot list the directory: \(error.localizedDescription)")
        }
        var migrations: [Migration] = []
        for file in names where file.hasSuffix(".sql") {
            guard let (version, name) = parse(fileName: file) else {
                throw PostgresError.invalidMigration(
                    file: file,
                    reason: "the name must be NNNN_name.sql (digits, underscore, letters, digits or underscores)")
            }
            guard let data = FileManager.default.contents(atPath: directory.appendingPathComponent(file).path),
                let sql = String(data: data, encoding: .utf8)
            else {
                throw PostgresError.invalidMigration(file: file, reason: "cannot be read as UTF-8 text")
            }
            if let other = migrations.first(where: { $0.version == version }) {
                throw PostgresError.invalidMigration(
                    file: file, reason: "version \(version) is also used by \(other.file)")
            }
            migrations.append(Migration(version: version, name: name, sql: sql, file: file))
        }
        return migrations.sorted { $0.version < $1.version }
    }

    private init(version: Int, name: String, sql: String, file: String) {
        self.version = version
        self.name = name
        self.sql = sql
        self.file = file
    }

    /// `0001_initial.sql` → (1, "initial").
    static func parse(fileName: String) -> (Int, String)? {
        guard fileName.hasSuffix(".sql") else { return nil }
        let stem = fileName.dropLast(4)
        guard let underscore = stem.firstIndex(of: "_") else { return nil }
        let digits = stem[..<underscore]
        let name = stem[stem.index(after: underscore)...]
        guard digits.count >= 4, digits.allSatisfy({ $0.isASCII && $0.isNumber }), let version = Int(digits),
            !name.isEmpty, name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") })
        else { return nil }
        return (version, String(name))
    }
}

/// Whether a migration has been applied, for `galleryd migrate --status`.
public struct MigrationStatus: Sendable, Equatable {
    /// The migration's version number.
    public let version: Int
    /// Its name (from the file, or from the record when the file is gone).
    public let name: String
    /// Whether `schema_migrations` records it.
    public let applied: Bool
    /// When it was applied, nil if it was not.
    public let appliedAt: Date?
    /// Whether the file's checksum differs from the recorded one (it was edited after applying).
    public let changed: Bool
    /// Whether it is recorded as applied but its file no longer exists.
    public let missingFile: Bool
}
