/// The keys every test server and every `galleryd` process a test starts is configured with.
public enum TestKeys {
    /// The Parse application id.
    public static let appID = "gallery"
    /// The master key (long enough, and not one the secret policy refuses).
    public static let masterKey = "test-master-key-0123456789"
    /// The `url_signing_key`.
    public static let urlSigningKey = "test-url-signing-key-0123456789abcdef"
}
