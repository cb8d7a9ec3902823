/// The values captured by a route's `:name` and `*name` segments, looked up by name.
///
/// Kept as the matched pieces of the request path, in pattern order: a request usually has one or
/// two and its handler reads each once, so a list beats a dictionary, and a value becomes a String
/// only when it is read. The first two are stored inline and only a third goes to an array, so
/// matching a route allocates nothing for its captures (decision 041).
public struct HTTPPathParameters: Sendable, Equatable, ExpressibleByDictionaryLiteral, CustomStringConvertible {
    /// One capture: the parameter's name and the piece of the path it matched.
    typealias Entry = (name: String, value: Substring)

    private var first: Entry?
    private var second: Entry?
    /// The third capture on, in order (size routes have four).
    private var more: [Entry] = []

    /// No parameters.
    public init() {}

    init(captures: [(String, Substring)]) {
        for (name, value) in captures { append(name, value) }
    }

    public init(dictionaryLiteral elements: (String, String)...) {
        for (name, value) in elements { append(name, Substring(value)) }
    }

    /// The number of parameters.
    public var count: Int { first == nil ? 0 : second == nil ? 1 : 2 + more.count }

    /// Adds a capture after the others (the router, walking the pattern).
    mutating func append(_ name: String, _ value: Substring) {
        if first == nil {
            first = (name, value)
        } else if second == nil {
            second = (name, value)
        } else {
            more.append((name, value))
        }
    }

    /// Takes back the last capture (the router, backtracking).
    mutating func removeLast() {
        if !more.isEmpty {
            more.removeLast()
        } else if second != nil {
            second = nil
        } else {
            first = nil
        }
    }

    /// The capture at `index` (pattern order).
    private func entry(_ index: Int) -> Entry {
        switch index {
        case 0: return first!
        case 1: return second!
        default: return more[index - 2]
        }
    }

    /// The piece of the path captured under `name`, without making a String of it: for handlers
    /// that read its bytes (the bucket's signed path).
    public func substring(_ name: String) -> Substring? {
        if let first, first.name == name { return first.value }
        if let second, second.name == name { return second.value }
        for entry in more where entry.name == name { return entry.value }
        return nil
    }

    /// The value captured under `name`, or nil when the route has no such parameter.
    public subscript(name: String) -> String? { substring(name).map(String.init) }

    /// The parameter names, in pattern order.
    public var names: [String] { (0..<count).map { entry($0).name } }

    public static func == (lhs: HTTPPathParameters, rhs: HTTPPathParameters) -> Bool {
        lhs.count == rhs.count
            && (0..<lhs.count).allSatisfy { rhs.substring(lhs.entry($0).name) == lhs.entry($0).value }
    }

    public var description: String {
        "[" + (0..<count).map { "\(entry($0).name): \(entry($0).value)" }.joined(separator: ", ") + "]"
    }
}
