import ArgumentParser
import Foundation
import GalleryApp

/// `galleryd compile-query CLASS QUERY`: prints the SQL the server runs for
/// `GET /parse/classes/CLASS?QUERY`, compiled by the route's own code, one JSON line per
/// statement: `{"statement":"select"|"count","sql":"…","arguments":["'20'",…]}`, the arguments
/// as SQL literals for `PREPARE s AS <sql>; EXECUTE s(<arguments>)`. bench/manifest.sh times
/// these with EXPLAIN ANALYZE. Compiled for the master key, or with `--user <objectId>` for that
/// user's session (the owner filter, the owner's counter). Needs no database; a bad query is the
/// route's Parse error, exit 1.
struct CompileQueryCommand: ParsableCommand {
    /// The subcommand name and its one-line help.
    static let configuration = CommandConfiguration(
        commandName: "compile-query",
        abstract: "Print the SQL of GET /parse/classes/CLASS?QUERY as the server compiles it (JSON lines).")

    @OptionGroup var options: ConfigOptions

    /// The Parse class, e.g. Photo.
    @Argument(help: "The class, e.g. Photo.")
    var className: String

    /// The percent-encoded query string, without `?`.
    @Argument(help: "The query string as sent, percent-encoded, without '?' (e.g. 'order=-createdAt&limit=20').")
    var query: String = ""

    /// Compile for this user's session instead of the master key.
    @Option(name: .customLong("user"), help: "Compile as this user's session (its objectId) instead of the master key.")
    var userId: String?

    /// Refuses an empty --user (it would compile an owner filter no row matches).
    func validate() throws {
        if let userId, userId.isEmpty { throw ValidationError("--user needs a user's objectId.") }
    }

    /// Compiles and prints; a Parse error goes to stderr with its code, exit 1.
    func run() throws {
        let compiled: ParseCompiledQuery
        do {
            let access = userId.map { ParseAccess(caller: .user(objectId: $0)) } ?? .master
            compiled = try ParseCompiledQuery.find(
                className: className, rawQuery: query, configuration: options.load(), access: access)
        } catch let error as ParseError {
            FileHandle.standardError.write(
                Data("galleryd compile-query: Parse error \(error.code): \(error.message)\n".utf8))
            throw ExitCode.failure
        }
        for (name, statement) in [("select", compiled.select), ("count", compiled.count)] {
            guard let statement else { continue }
            let arguments = statement.bindLiterals.map(ParseJSONWriter.quoted).joined(separator: ",")
            print(
                "{\"statement\":\(ParseJSONWriter.quoted(name)),\"sql\":\(ParseJSONWriter.quoted(statement.sql)),"
                    + "\"arguments\":[\(arguments)]}")
        }
    }
}
