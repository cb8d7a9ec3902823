/// What one request may read and write: its caller, and whether callers without a session read
/// what is public (`public_read`). `ParseSQLCompiler` turns it into the filter every statement on
/// Photo, Gallery and GalleryItem carries (`ParseSQLCompiler+Access`), the one place access is decided.
public struct ParseAccess: Sendable, Equatable {
    /// Who the request acts for.
    public var caller: ParseCaller
    /// Whether a caller without a session reads public galleries (ACL `"*":{"read":true}`), their
    /// items and those items' photos.
    public var publicRead: Bool
    /// The names of every role the caller has (direct and inherited, sorted), resolved once per
    /// request by `ParseRoleResolver.access(for:publicRead:)`; empty for the master key and
    /// callers without a session.
    public var roleNames: [String]

    /// An access for `caller`, with the roles `roleNames` already resolved for it.
    public init(caller: ParseCaller, publicRead: Bool = false, roleNames: [String] = []) {
        self.caller = caller
        self.publicRead = publicRead
        self.roleNames = roleNames
    }

    /// The ACL keys that grant this caller (the one answer to "is this ACL entry mine?", for ACLs
    /// and class-level permissions alike): `*`, the user's objectId and `role:<Name>` for each of
    /// their roles; `*` alone without a session (only with `public_read`, none otherwise), none for
    /// the master key (who needs no grant).
    public var principals: [String] {
        switch caller {
        case .master: return []
        case .anonymous: return publicRead ? ["*"] : []
        case .user(let id): return ["*", id] + roleNames.map { "role:" + $0 }
        }
    }

    /// Whether the caller has the role `name` (directly or through a role containing theirs).
    public func hasRole(_ name: String) -> Bool {
        roleNames.contains(name)
    }

    /// The master key: every row, every change.
    public static let master = ParseAccess(caller: .master)

    /// What an `ETag` is keyed by besides the query: answers for different callers never share a tag.
    var tagKey: String {
        switch caller {
        case .master: return "master"
        case .user(let id): return "user:" + id + roleNames.map { "|role:" + $0 }.joined()
        case .anonymous: return publicRead ? "anonymous:public" : "anonymous"
        }
    }
}

/// What a statement needs of a row: to read it, to change it (for a gallery: its name and its
/// items, which a write grant in its ACL allows), or to own it (its ACL, trash, restore, purge).
public enum ParseAccessNeed: Sendable {
    case read, edit, own
}
