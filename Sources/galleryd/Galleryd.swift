import ArgumentParser
import Foundation
import GalleryApp

/// The galleryd command line: parses arguments, loads the configuration and runs one command.
@main
struct Galleryd: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "galleryd",
        abstract: "A self-hosted photo gallery backend: Parse-compatible API, S3-style bucket, thumbnail worker.",
        subcommands: [
            ServeCommand.self, MigrateCommand.self, WorkerCommand.self, ImportCommand.self,
            ProcessCommand.self, CheckConfigCommand.self, JobsCommand.self, StorageCommand.self, UsersCommand.self,
            CompileQueryCommand.self,
        ],
        defaultSubcommand: nil)
}

/// Options every command that reads the configuration shares.
struct ConfigOptions: ParsableArguments {
    @Option(name: .long, help: "Config file (TOML; see config/galleryd.example.toml). Also GALLERYD_CONFIG.")
    var config: String?

    @Option(name: .customLong("database-url"), help: "PostgreSQL URL (DATABASE_URL).")
    var databaseURL: String?

    @Option(name: .customLong("storage-dir"), help: "Blob store directory (GALLERYD_STORAGE_DIR).")
    var storageDir: String?

    /// Loads the effective configuration, adding these flags and any extra overrides;
    /// a bad value ends the process with a one-line error naming the key and exit code 2.
    func load(extra: [(key: String, value: String)] = []) -> GalleryConfiguration {
        var overrides: [(key: String, value: String)] = []
        if let databaseURL { overrides.append((key: "database_url", value: databaseURL)) }
        if let storageDir { overrides.append((key: "storage_dir", value: storageDir)) }
        do {
            return try GalleryConfiguration.load(file: config, overrides: overrides + extra)
        } catch {
            fail("config: \(error)")
        }
    }
}

/// Prints a one-line error and exits with code 2 (a usage or configuration problem).
func fail(_ message: String, code: Int32 = 2) -> Never {
    FileHandle.standardError.write(Data("galleryd: \(message)\n".utf8))
    exit(code)
}
