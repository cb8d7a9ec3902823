/// What one request may read and write: its caller, and whether callers without a session read
/// what is public (`public_read`). `ParseSQLCompiler` turns it into the filter every statement on
/// Photo, Gallery and GalleryItem carries (`ParseSQLCompiler+Access`), the one place access is decided.
public struct ParseAccess: Sendable, Equatable {
    /// Who the request acts for.
    public var caller: ParseCaller
    /// Whether a caller without a session reads public galleries (ACL `"*":{"read":true}`), their
    /// items and those items' photos.
    public var publicRead: Bool

    /// An access for `caller`.
    public init(caller: ParseCaller, publicRead: Bool = false) {
        self.caller = caller
        self.publicRead = publicRead
    }

    /// The master key: every row, every change.
    public static let master = ParseAccess(caller: .master)

    /// What an `ETag` is keyed by besides the query: answers for different callers never share a tag.
    var tagKey: String {
        switch caller {
        case .master: return "master"
        case .user(let id): return "user:" + id
        case .anonymous: return publicRead ? "anonymous:public" : "anonymous"
        }
    }
}

/// What a statement needs of a row: to read it, to change it (for a gallery: its name and its
/// items, which a write grant in its ACL allows), or to own it (its ACL, trash, restore, purge).
public enum ParseAccessNeed: Sendable {
    case read, edit, own
}
