import Crypto
import Foundation
import _CryptoExtras

/// Password hashes as self-describing scrypt strings, `scrypt$N$r$p$<salt>$<hash>` (salt and hash
/// in base64), so the work factor can be raised later without a migration: a login whose stored
/// parameters are weaker than `parameters` gets `needsRehash` and the caller stores a new hash.
///
/// scrypt is memory-hard (128·N·r bytes per hash: 128 MiB with the defaults), so hashes run at most
/// `concurrency` at a time: a burst of logins queues instead of taking the machine's memory.
struct PasswordHasher: Sendable {
    /// scrypt's cost parameters.
    struct Parameters: Sendable, Equatable {
        /// CPU and memory cost (a power of two).
        var n: Int
        /// Block size.
        var r: Int
        /// Parallelism.
        var p: Int

        /// N = 2^17, r = 8, p = 1: 128 MiB and a few hundred milliseconds per hash on one core
        /// (docs/decisions/023-users-passwords-sessions-throttling.md): OWASP's current minimum for scrypt. Hashes
        /// stored at 2^15 (before) are replaced at their user's next login (`needsRehash`).
        static let standard = Parameters(n: 1 << 17, r: 8, p: 1)

        /// Whether these are parameters this server is willing to run: a power-of-two N up to 2^20
        /// (1 GiB at r = 8 would be an outage, so stored strings beyond the bounds count as malformed).
        var isAcceptable: Bool {
            n >= 2 && n <= 1 << 20 && n & (n - 1) == 0 && (1...32).contains(r) && (1...16).contains(p)
        }

        /// Whether hashes made with these parameters are at least as strong as with `other`.
        func isAtLeast(_ other: Parameters) -> Bool { n >= other.n && r >= other.r && p >= other.p }
    }

    /// The outcome of checking a password against a stored hash.
    struct Verification: Sendable, Equatable {
        /// Whether the password is the one hashed.
        var matches: Bool
        /// Whether the stored hash used weaker parameters than `PasswordHasher.parameters` (meaningful
        /// when `matches`): store `hash(password)` in its place.
        var needsRehash: Bool
    }

    /// The parameters of new hashes.
    let parameters: Parameters
    /// Salt bytes of new hashes.
    static let saltBytes = 16
    /// Derived key bytes.
    static let keyBytes = 32
    /// Hashes running at once, process-wide: one per core, and at most 4 (512 MiB at the default cost).
    static let concurrency = max(1, min(4, ProcessInfo.processInfo.activeProcessorCount))
    private static let gate = DispatchSemaphore(value: concurrency)

    /// A hasher making new hashes with `parameters`.
    init(parameters: Parameters = .standard) {
        self.parameters = parameters
    }

    /// A hasher of N = 2^`cost` and the standard r and p (`password_hash_cost`).
    init(cost: Int) {
        self.init(parameters: Parameters(n: 1 << cost, r: Parameters.standard.r, p: Parameters.standard.p))
    }

    /// A new hash of `password` with a fresh random salt.
    func hash(_ password: String) throws -> String {
        var generator = SystemRandomNumberGenerator()
        let salt = (0..<Self.saltBytes).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let key = try Self.derive(password, salt: salt, parameters: parameters)
        return "scrypt$\(parameters.n)$\(parameters.r)$\(parameters.p)$"
            + Data(salt).base64EncodedString() + "$" + Data(key).base64EncodedString()
    }

    /// Checks `password` against `stored` in time independent of where the bytes differ. A malformed
    /// stored string never matches (and costs a dummy hash, so it cannot be told apart by time).
    func verify(_ password: String, against stored: String) throws -> Verification {
        guard let parsed = Self.parse(stored) else {
            try spendHashTime(password)
            return Verification(matches: false, needsRehash: false)
        }
        let key = try Self.derive(password, salt: parsed.salt, parameters: parsed.parameters)
        let matches = KeyChecker.constantTimeEquals(key, parsed.key)
        return Verification(matches: matches, needsRehash: matches && !parsed.parameters.isAtLeast(parameters))
    }

    /// Spends the time of a real check without one (a login for an unknown username), so response
    /// times do not tell which usernames exist.
    func spendHashTime(_ password: String) throws {
        _ = try Self.derive(password, salt: [UInt8](repeating: 0, count: Self.saltBytes), parameters: parameters)
    }

    /// A stored string's parts, or nil when it is not a well-formed scrypt string this server accepts.
    static func parse(_ stored: String) -> (parameters: Parameters, salt: [UInt8], key: [UInt8])? {
        let parts = stored.split(separator: "$", omittingEmptySubsequences: false)
        guard parts.count == 6, parts[0] == "scrypt", let n = Int(parts[1]), let r = Int(parts[2]),
            let p = Int(parts[3]),
            let salt = Data(base64Encoded: String(parts[4])), let key = Data(base64Encoded: String(parts[5])),
            !salt.isEmpty, key.count == keyBytes
        else { return nil }
        let parameters = Parameters(n: n, r: r, p: p)
        guard parameters.isAcceptable else { return nil }
        return (parameters, [UInt8](salt), [UInt8](key))
    }

    private static func derive(_ password: String, salt: [UInt8], parameters: Parameters) throws -> [UInt8] {
        gate.wait()
        defer { gate.signal() }
        let key = try KDF.Scrypt.deriveKey(
            from: Array(password.utf8), salt: salt, outputByteCount: keyBytes, rounds: parameters.n,
            blockSize: parameters.r, parallelism: parameters.p)
        return key.withUnsafeBytes { [UInt8]($0) }
    }
}
