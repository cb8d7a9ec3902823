import Foundation
import Logging
import Postgres

/// Accounts and sessions: sign-up, login with throttling, logout, changes to a user (a password
/// change revokes the user's other sessions), and the operator's commands. Passwords are hashed
/// with scrypt (`PasswordHasher`) outside any database connection, so a burst of logins cannot
/// hold the pool; they are never logged and never returned. Logins, sign-ups and password changes
/// run in `HandlerSlots`, so they never hold more than half the handler threads.
public final class AccountService: Sendable {
    /// A user as shown to clients and operators (no password, no hash).
    public typealias User = UserAccount
    /// A session as `GET /sessions` shows it.
    typealias Session = SessionRepository.Session

    /// Input limits, with their reasons.
    public enum Limits {
        /// Longest username, in characters: a name, not a document.
        public static let usernameCharacters = 128
        /// Longest password, in UTF-8 bytes: long passphrases fit; megabytes never reach scrypt.
        public static let passwordBytes = 1024
        /// Longest email address (RFC 5321's path limit).
        public static let emailBytes = 254
    }

    let users: UserRepository
    let sessions: SessionRepository
    /// Who owns what: a user who still owns content cannot be deleted (migrations/0014, RESTRICT).
    let ownership: OwnershipRepository
    let authenticator: SessionAuthenticator
    let throttle: LoginThrottle
    let hasher: PasswordHasher
    /// The bounded queue of logins, sign-ups and password changes in front of the hash pool.
    let slots: HandlerSlots
    /// Seconds a new session lasts.
    let sessionLifetime: TimeInterval
    /// Whether sign-up without the master key is open.
    let signupOpen: Bool
    let logger: Logger
    private let metrics: GalleryMetrics?
    /// Re-read after a sign-up or a user's deletion, which change what requests without a session
    /// read (the first account, the last one gone), so this server's next find has the new tag at
    /// once rather than a kept answer from before; nil for the commands, which serve no finds.
    private let classChanges: ClassChangeSequences?

    init(
        pool: PostgresPool, authenticator: SessionAuthenticator, configuration: GalleryConfiguration,
        metrics: GalleryMetrics?, logger: Logger, hasher: PasswordHasher = PasswordHasher(),
        classChanges: ClassChangeSequences? = nil
    ) {
        self.classChanges = classChanges
        users = UserRepository(pool: pool)
        sessions = SessionRepository(pool: pool)
        ownership = OwnershipRepository(pool: pool)
        self.authenticator = authenticator
        var limits = LoginThrottle.Limits()
        limits.freeFailuresPerUsername = configuration.loginFreeFailures
        limits.freeFailuresPerAddress = configuration.loginFreeFailuresPerAddress
        throttle = LoginThrottle(failures: LoginFailureRepository(pool: pool), limits: limits, metrics: metrics)
        self.hasher = hasher
        slots = HandlerSlots(
            configured: configuration.loginConcurrency, handlerThreads: configuration.effectiveHandlerThreads)
        sessionLifetime = Double(configuration.sessionLengthDays) * 86_400
        signupOpen = configuration.signupOpen
        self.logger = logger
        self.metrics = metrics
    }

    /// Runs one scrypt computation of `hasher`, counted in `galleryd_password_hashes_total`.
    private func hashed<T>(_ body: () throws -> T) rethrows -> T {
        metrics?.passwordHashes.increment()
        return try body()
    }

    // MARK: Sign-up and login

    /// `POST /users`: a new account and its first session. Without the master key only while
    /// `signup_open` is on.
    func signUp(
        username: String?, password: String?, email: String?, isMaster: Bool, installationId: String?
    ) throws -> (user: User, token: SessionToken) {
        guard isMaster || signupOpen else { throw AccountError.signupClosed }
        defer { classChanges?.refreshAfterWrite() }
        return try slots.run {
            let user = try createUser(username: username, password: password, email: email, isAdmin: false)
            return (user, try openSession(userId: user.objectId, createdWith: "signup", installationId: installationId))
        }
    }

    /// A new account without a session (`galleryd users create`, and sign-up).
    public func createUser(username: String?, password: String?, email: String?, isAdmin: Bool) throws -> User {
        let username = try Self.validUsername(username)
        let password = try Self.validPassword(password)
        let email = try email.map(Self.validEmail)
        let hash = try hashed { try hasher.hash(password) }
        return try users.insert(
            objectId: ParseObjectID.generate(), username: username, email: email, passwordHash: hash, isAdmin: isAdmin)
    }

    /// `GET`/`POST /login`: the user and a new session, or `invalidCredentials` (unknown user and
    /// wrong password alike, in the same time), or `throttled` after repeated failures, or `busy`
    /// when every login slot is taken.
    func logIn(
        username: String?, email: String?, password: String?, address: String?, installationId: String?
    ) throws -> (user: User, token: SessionToken) {
        let username = username.flatMap { $0.isEmpty ? nil : $0 }
        let email = email.flatMap { $0.isEmpty ? nil : $0 }
        guard username != nil || email != nil else { throw AccountError.usernameMissing }
        guard let password, !password.isEmpty else { throw AccountError.passwordMissing }
        return try slots.run {
            try checkedLogIn(
                username: username, email: email, password: password, address: address, installationId: installationId)
        }
    }

    /// The throttle, the password check and the new session of `logIn`, in a login slot.
    private func checkedLogIn(
        username: String?, email: String?, password: String, address: String?, installationId: String?
    ) throws -> (user: User, token: SessionToken) {
        // Over-long input names no account: refused without a hash (no stored one could match) and
        // counted against the address alone, so a flood of it meets the throttle at no hashing cost.
        guard (username?.count ?? 0) <= Limits.usernameCharacters, (email?.utf8.count ?? 0) <= Limits.emailBytes,
            password.utf8.count <= Limits.passwordBytes
        else {
            let attempt = try throttle.admit(
                throttle.keys(userId: nil, username: nil, email: nil, overLong: true, address: address))
            try throttle.recordFailure(attempt)
            throw AccountError.invalidCredentials
        }
        // The account first, so its username and email logins share one throttle key.
        let credentials = try users.credentials(username: username, email: email)
        let keys = throttle.keys(
            userId: credentials?.objectId, username: username, email: email, overLong: false, address: address)
        let attempt = try throttle.admit(keys)
        guard let credentials else {
            try hashed { try hasher.spendHashTime(password) }
            try throttle.recordFailure(attempt)
            throw AccountError.invalidCredentials
        }
        let verification = try hashed { try hasher.verify(password, against: credentials.passwordHash) }
        guard verification.matches else {
            try throttle.recordFailure(attempt)
            throw AccountError.invalidCredentials
        }
        try throttle.recordSuccess(keys)
        if verification.needsRehash {
            try users.replaceHash(
                objectId: credentials.objectId, old: credentials.passwordHash,
                new: try hashed { try hasher.hash(password) })
        }
        guard let user = try users.find(objectId: credentials.objectId) else { throw AccountError.invalidCredentials }
        try sessions.deleteExpired(userId: user.objectId)
        return (user, try openSession(userId: user.objectId, createdWith: "login", installationId: installationId))
    }

    /// Revokes the session of `token` (`POST /logout`, `galleryd`'s own), at once in this process.
    func logOut(_ token: SessionToken) throws {
        _ = try sessions.delete(tokenHash: token.hash)
        authenticator.forget(token)
    }

    private func openSession(userId: String, createdWith: String, installationId: String?) throws -> SessionToken {
        let token = SessionToken.random()
        try sessions.pool.withConnection { connection in
            try sessions.insert(
                sessionId: ParseObjectID.generate(), tokenHash: token.hash, userId: userId, createdWith: createdWith,
                installationId: installationId, lifetime: sessionLifetime, on: connection)
        }
        return token
    }

    // MARK: Users

    /// The user with this objectId.
    public func user(objectId: String) throws -> User? { try users.find(objectId: objectId) }

    /// The user with this username.
    public func user(username: String) throws -> User? { try users.find(username: username) }

    /// Every user, oldest first (`galleryd users list`).
    public func allUsers() throws -> [User] { try users.all() }

    /// What a `PUT /users/<id>` may change.
    struct Changes {
        var username: String?
        var email: String??
        var password: String?
    }

    /// Applies `changes` to a user. A new password revokes every session of the user but
    /// `keepingSession` (the one that changed it; nil for the master key and the operator's reset).
    func update(userId: String, _ changes: Changes, keepingSession: SessionToken?) throws -> User {
        var repositoryChanges = UserRepository.Changes()
        if let username = changes.username { repositoryChanges.username = try Self.validUsername(username) }
        if let email = changes.email { repositoryChanges.email = .some(try email.map(Self.validEmail)) }
        if let password = changes.password {
            let valid = try Self.validPassword(password)
            repositoryChanges.passwordHash = try slots.run { try hashed { try hasher.hash(valid) } }
        }
        guard let user = try users.update(objectId: userId, repositoryChanges) else { throw AccountError.notFound }
        if changes.password != nil {
            let revoked = try sessions.deleteAll(userId: userId, keeping: keepingSession?.hash)
            for hash in revoked { authenticator.forget(hash: hash) }
            logger.notice(
                "password changed; other sessions revoked",
                metadata: ["user": "\(userId)", "revoked": "\(revoked.count)"])
        }
        return user
    }

    /// `galleryd users reset-password`: a new password, and every session of the user revoked.
    public func resetPassword(username: String, password: String) throws {
        guard let user = try users.find(username: username) else { throw AccountError.notFound }
        _ = try update(userId: user.objectId, Changes(password: password), keepingSession: nil)
    }

    /// Deletes a user and its sessions; `notFound` when there is none.
    public func deleteUser(objectId: String) throws {
        defer { classChanges?.refreshAfterWrite() }
        // Photos own blobs only the trash path releases: their owner purges them first (0014).
        if try ownership.ownsContent(objectId) { throw AccountError.ownsContent(userId: objectId) }
        let revoked = try sessions.deleteAll(userId: objectId)
        guard try users.delete(objectId: objectId) else { throw AccountError.notFound }
        for hash in revoked { authenticator.forget(hash: hash) }
    }

    // MARK: Sessions

    /// The unexpired session of `token`.
    func session(_ token: SessionToken) throws -> Session? { try sessions.session(tokenHash: token.hash) }

    /// A user's sessions, or every session for nil (the master key).
    func sessionList(userId: String?) throws -> [Session] {
        if let userId { return try sessions.sessions(userId: userId) }
        return try sessions.all(limit: 1000)
    }

    /// Revokes a session by objectId: the caller's own (`userId`), or any for nil (the master key).
    func revokeSession(objectId: String, userId: String?) throws {
        guard let hash = try sessions.delete(objectId: objectId, userId: userId) else { throw AccountError.notFound }
        authenticator.forget(hash: hash)
    }

    // MARK: Validation

    static func validUsername(_ username: String?) throws -> String {
        guard let username, !username.isEmpty else { throw AccountError.usernameMissing }
        guard username.count <= Limits.usernameCharacters else {
            throw AccountError.invalidUsername("longer than \(Limits.usernameCharacters) characters")
        }
        guard username.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7F }) else {
            throw AccountError.invalidUsername("control characters are not allowed")
        }
        guard username.trimmingCharacters(in: .whitespaces) == username else {
            throw AccountError.invalidUsername("leading or trailing spaces are not allowed")
        }
        return username
    }

    static func validPassword(_ password: String?) throws -> String {
        guard let password, !password.isEmpty else { throw AccountError.passwordMissing }
        guard password.utf8.count <= Limits.passwordBytes else {
            throw AccountError.invalidPassword("longer than \(Limits.passwordBytes) bytes")
        }
        return password
    }

    /// Parse Server's check (something@something), bounded and without spaces or control characters.
    static func validEmail(_ email: String) throws -> String {
        let parts = email.split(separator: "@", omittingEmptySubsequences: false)
        guard email.utf8.count <= Limits.emailBytes, parts.count >= 2, !parts.first!.isEmpty, !parts.last!.isEmpty,
            email.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value != 0x7F })
        else { throw AccountError.invalidEmail }
        return email
    }
}

extension AccountService {
    /// An account service on a small pool of its own, without the blob store or routes, for the
    /// `galleryd users` commands; pending migrations are applied first when `migrate_on_start` is on
    /// (so `users create` works on a fresh database before the first `serve`). Shut the pool down after.
    public static func standalone(
        configuration: GalleryConfiguration, logger: Logger
    ) throws -> (pool: PostgresPool, accounts: AccountService) {
        let (pool, migrator) = GalleryApplication.makeMigrator(configuration: configuration)
        if configuration.migrateOnStart { try migrator.migrate() }
        let authenticator = SessionAuthenticator(sessions: SessionRepository(pool: pool))
        return (
            pool,
            AccountService(
                pool: pool, authenticator: authenticator, configuration: configuration, metrics: nil, logger: logger,
                hasher: PasswordHasher(cost: configuration.passwordHashCost))
        )
    }

    /// A random password for an account the operator creates or resets without giving one:
    /// 20 characters of [A-Za-z0-9] (about 119 bits).
    public static func randomPassword() -> String {
        String((0..<2).map { _ in ParseObjectID.generate() }.joined())
    }
}
