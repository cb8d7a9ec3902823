/// Who a Parse request acts for, decided once per request from its keys and session token
/// (`SessionAuthenticator`): the master key, a logged-in user, or the app's keys alone.
/// Every read and write the request makes is filtered by it (docs/decisions/012-access-decided-in-sql.md).
public enum ParseCaller: Sendable, Equatable {
    /// The master key: sees and may do everything, and may act for any user.
    case master
    /// A valid session's user.
    case user(objectId: String)
    /// The application id (and REST key) without a session: reads only what is public.
    case anonymous

    /// The user's objectId, nil for the master key and anonymous callers.
    public var userId: String? {
        if case .user(let id) = self { return id }
        return nil
    }

    public var isMaster: Bool { self == .master }
}
