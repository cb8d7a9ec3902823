/// The values captured by a route's `:name` and `*name` segments, looked up by name.
///
/// Kept as the matched pieces of the request path, in pattern order: a request usually has one or
/// two and its handler reads each once, so a list beats a dictionary, and a value becomes a String
/// only when it is read.
public struct HTTPPathParameters: Sendable, Equatable, ExpressibleByDictionaryLiteral, CustomStringConvertible {
    /// (name, value) pairs; the same shape as the router's captures, so matching hands its list over.
    private var entries: [(String, Substring)]

    /// No parameters.
    public init() { entries = [] }

    init(captures: [(String, Substring)]) { entries = captures }

    public init(dictionaryLiteral elements: (String, String)...) {
        entries = elements.map { ($0.0, Substring($0.1)) }
    }

    /// The value captured under `name`, or nil when the route has no such parameter.
    public subscript(name: String) -> String? {
        for (key, value) in entries where key == name { return String(value) }
        return nil
    }

    /// The parameter names, in pattern order.
    public var names: [String] { entries.map(\.0) }

    /// The number of parameters.
    public var count: Int { entries.count }

    public static func == (lhs: HTTPPathParameters, rhs: HTTPPathParameters) -> Bool {
        lhs.count == rhs.count && lhs.entries.allSatisfy { rhs[$0.0] == String($0.1) }
    }

    public var description: String {
        "[" + entries.map { "\($0.0): \($0.1)" }.joined(separator: ", ") + "]"
    }
}
