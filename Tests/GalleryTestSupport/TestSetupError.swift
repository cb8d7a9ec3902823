/// Why a test could not set itself up (no `DATABASE_URL`, a socket that would not connect, a
/// fixture request that failed). Thrown, it fails the test like a failed `#require`.
public struct TestSetupError: Error, CustomStringConvertible {
    /// What went wrong, for the test log.
    public let description: String

    /// An error saying `description`.
    public init(description: String) {
        self.description = description
    }
}
