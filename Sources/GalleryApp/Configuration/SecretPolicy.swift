/// What `serve` and `check-config --serving` accept as a `master_key` or `url_signing_key` beyond
/// its length: never a placeholder shipped in the repository's example files (a copied example
/// would hand anyone full admin, or the power to forge asset URLs), and never a key of low variety
/// (`aaaa…`, `0101…`), which no generator produces.
public enum SecretPolicy {
    /// Every secret value the repository's examples ship (`docker/.env.example`,
    /// `config/systemd/galleryd.env.example`); a test reads those files and checks each is here.
    public static let shippedPlaceholders: Set<String> = [
        "change-me",
        "change-me-to-at-least-16-random-characters",
        "change-me-to-at-least-32-random-characters-0000",
        "change-me-to-a-long-random-string",
    ]

    /// Fewest distinct characters a key must have: 64 random hex digits have 16, and a typed
    /// phrase of the required length well over 10.
    public static let minimumDistinctCharacters = 10

    /// How the errors say to make a key.
    public static let howToGenerate = "generate one with `openssl rand -hex 32`"

    /// Why `value` must not be used as a secret, or nil when it may.
    public static func problem(with value: String) -> String? {
        if shippedPlaceholders.contains(value) {
            return "is the placeholder shipped in the repository's example files; \(howToGenerate)"
        }
        if Set(value.unicodeScalars).count < minimumDistinctCharacters {
            return "has fewer than \(minimumDistinctCharacters) distinct characters; \(howToGenerate)"
        }
        return nil
    }
}
