import ArgumentParser
import Foundation
import GalleryApp
import Postgres

/// `galleryd users`: accounts from the command line, for operators (sign-up is closed by default).
struct UsersCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "users", abstract: "Create, list, reset and delete user accounts.",
        subcommands: [
            UsersCreateCommand.self, UsersListCommand.self, UsersResetPasswordCommand.self, UsersDeleteCommand.self,
        ])
}

/// Where a command reads a password from: a file (its first line), standard input (all of it, less
/// the final newline), or nowhere, in which case a random one is made and printed once.
/// Never an argument: command lines show up in `ps` and shell history.
struct PasswordOptions: ParsableArguments {
    @Option(name: .customLong("password-file"), help: "Read the password from this file (its first line).")
    var passwordFile: String?
    @Flag(name: .customLong("password-stdin"), help: "Read the password from standard input.")
    var passwordStdin = false

    func validate() throws {
        if passwordFile != nil && passwordStdin {
            throw ValidationError("give --password-file or --password-stdin, not both")
        }
    }

    /// The password, and whether it was generated (and must be shown to the operator).
    func read() -> (password: String, generated: Bool) {
        if let passwordFile {
            guard let text = try? String(contentsOfFile: passwordFile, encoding: .utf8) else {
                fail("users: cannot read --password-file \(passwordFile)", code: 1)
            }
            return (
                String(text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""), false
            )
        }
        if passwordStdin {
            var text = String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self)
            if text.hasSuffix("\n") { text.removeLast() }
            if text.hasSuffix("\r") { text.removeLast() }
            return (text, false)
        }
        return (AccountService.randomPassword(), true)
    }
}

/// Runs `body` with an account service on the configured database; errors end the process with
/// a one-line message and exit code 1.
private func withAccounts(_ options: ConfigOptions, _ what: String, _ body: (AccountService) throws -> Void) {
    withAccounts(options, what) { accounts, _ in try body(accounts) }
}

/// `withAccounts` with the pool too (for the ownership upgrade after `create --admin`).
private func withAccounts(
    _ options: ConfigOptions, _ what: String, _ body: (AccountService, PostgresPool) throws -> Void
) {
    var configuration = options.load()
    configuration.workers = 0
    guard !configuration.databaseURL.isEmpty else { fail("config: database_url: not set (DATABASE_URL)") }
    let logger = bootstrapLogging(level: "warning")
    do {
        let (pool, accounts) = try AccountService.standalone(configuration: configuration, logger: logger)
        defer { pool.shutdown() }
        try body(accounts, pool)
    } catch {
        fail("users \(what): \(error)", code: 1)
    }
}

/// `galleryd users create <username> [--email E] [--admin] [--password-file F | --password-stdin]`.
struct UsersCreateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "create", abstract: "Create an account (a random password is printed when none is given).")

    @OptionGroup var options: ConfigOptions
    @Argument(help: "The username.") var username: String
    @Option(help: "The account's email address.") var email: String?
    @Flag(help: "Make the account an administrator.") var admin = false
    @OptionGroup var password: PasswordOptions

    func run() throws {
        let (secret, generated) = password.read()
        withAccounts(options, "create") { accounts, pool in
            let user = try accounts.createUser(username: username, password: secret, email: email, isAdmin: admin)
            print("users: created \(user.username) (objectId \(user.objectId)\(admin ? ", admin" : ""))")
            if generated { print("password: \(secret)") }
            // The upgrade of a single-tenant install (docs/operations.md, "Upgrading to accounts").
            if admin {
                let assigned = try OwnershipRepository(pool: pool).assignOwnerlessRowsToFirstAdmin()
                if !assigned.isEmpty, let adminId = assigned.adminId {
                    print(
                        "users: gave \(assigned.photos) photo(s), \(assigned.galleries) gallery(ies) and \(assigned.galleryItems) item(s) without an owner to the first admin (\(adminId))"
                    )
                }
            }
        }
    }
}

/// `galleryd users list`: one line per account, oldest first.
struct UsersListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List the accounts.")

    @OptionGroup var options: ConfigOptions

    func run() throws {
        withAccounts(options, "list") { accounts in
            let users = try accounts.allUsers()
            let formatter = ISO8601DateFormatter()
            print("objectId    username  email  admin  created")
            for user in users {
                print(
                    [
                        user.objectId, user.username, user.email ?? "-", user.isAdmin ? "admin" : "-",
                        formatter.string(from: user.createdAt),
                    ].joined(separator: "  "))
            }
            print("users: \(users.count) account(s)")
        }
    }
}

/// `galleryd users reset-password <username> [--password-file F | --password-stdin]`: a new password,
/// every session of the account revoked.
struct UsersResetPasswordCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reset-password",
        abstract: "Set a new password (a random one is printed when none is given) and revoke the account's sessions.")

    @OptionGroup var options: ConfigOptions
    @Argument(help: "The username.") var username: String
    @OptionGroup var password: PasswordOptions

    func run() throws {
        let (secret, generated) = password.read()
        withAccounts(options, "reset-password") { accounts in
            do {
                try accounts.resetPassword(username: username, password: secret)
            } catch AccountError.notFound {
                fail("users reset-password: no user named \(username)", code: 1)
            }
            print("users: password of \(username) reset; its sessions are revoked")
            if generated { print("password: \(secret)") }
        }
    }
}

/// `galleryd users delete <username>`: the account and its sessions.
struct UsersDeleteCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete", abstract: "Delete an account and its sessions.")

    @OptionGroup var options: ConfigOptions
    @Argument(help: "The username.") var username: String

    func run() throws {
        withAccounts(options, "delete") { accounts in
            guard let user = try accounts.user(username: username) else {
                fail("users delete: no user named \(username)", code: 1)
            }
            try accounts.deleteUser(objectId: user.objectId)
            print("users: deleted \(username)")
        }
    }
}
