/// A mistake in how routes were registered (not in a request): the router refuses it at once.
public enum HTTPRouterError: Error, Equatable, CustomStringConvertible {
    /// A route for `method` and `pattern` was added when `existing` (the same, or the same with other
    /// parameter names: `:id` and `:objectId` match the same paths) already answers it.
    case duplicateRoute(method: HTTPMethod, pattern: String, existing: String)

    public var description: String {
        switch self {
        case .duplicateRoute(let method, let pattern, let existing):
            "duplicate route: \(method.rawValue) \(pattern) is already registered"
                + (existing == pattern ? "" : " as \(existing)")
        }
    }
}
