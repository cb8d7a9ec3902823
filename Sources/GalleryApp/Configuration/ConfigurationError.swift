/// A configuration problem, reported in one line naming the key.
public enum ConfigurationError: Error, CustomStringConvertible, Equatable {
    /// A value that does not fit its key.
    case invalidValue(key: String, value: String, reason: String)
    /// A key the file names that galleryd does not know.
    case unknownKey(key: String, file: String, line: Int)
    /// A line of the config file that is not `key = value`.
    case syntax(file: String, line: Int, reason: String)
    /// The config file could not be read.
    case unreadable(file: String, reason: String)
    /// A required setting is missing or settings contradict each other.
    case invalid(key: String, reason: String)

    public var description: String {
        switch self {
        case .invalidValue(let key, let value, let reason):
            let shown = value.count > 60 ? String(value.prefix(60)) + "…" : value
            return "\(key): \"\(shown)\": \(reason)"
        case .unknownKey(let key, let file, let line): return "\(file):\(line): unknown key \(key)"
        case .syntax(let file, let line, let reason): return "\(file):\(line): \(reason)"
        case .unreadable(let file, let reason): return "\(file): \(reason)"
        case .invalid(let key, let reason): return "\(key): \(reason)"
        }
    }
}
