import Foundation

/// A user as the API and the `users` command show it: never the password or its hash.
public struct UserAccount: Sendable, Equatable {
    /// Parse's objectId of the `_User`.
    public var objectId: String
    /// Unique, case-sensitive (as Parse Server).
    public var username: String
    /// Unique case-insensitively when set.
    public var email: String?
    /// An administrator (`galleryd users create --admin`).
    public var isAdmin: Bool
    public var createdAt: Date
    public var updatedAt: Date
}
