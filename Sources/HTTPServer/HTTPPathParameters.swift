/// The values captured by a route's `:name` and `*name` segments, looked up by name.
///
/// Kept as where each value lies in the request path (UTF-8 offsets into it), in pattern order: a
/// request usually has one or two and its handler reads each once, so a list beats a dictionary,
/// and a value becomes a `Substring` (or a `String`) only when it is read. The first four are
/// stored inline (the signed size URL has four) and only a fifth goes to an array, so matching a
/// route allocates nothing for its captures, and taking one back while backtracking is forgetting
/// two numbers (decisions 041, 052).
public struct HTTPPathParameters: Sendable, Equatable, ExpressibleByDictionaryLiteral, CustomStringConvertible {
    /// One capture: the parameter's name and the UTF-8 offsets of its value in `text`.
    typealias Entry = (name: String, start: Int, end: Int)

    /// The text the values are pieces of: the request's decoded path (for parameters given by
    /// hand, their values one after another).
    private var text: String
    private var first: Entry?
    private var second: Entry?
    private var third: Entry?
    private var fourth: Entry?
    /// The fifth capture on, in order.
    private var more: [Entry] = []

    /// No parameters.
    public init() { text = "" }

    /// Parameters whose values will be pieces of `path` (the router, walking it).
    init(path: String) { text = path }

    init(captures: [(String, Substring)]) {
        text = captures.map { String($0.1) }.joined()
        var offset = 0
        for (name, value) in captures {
            let length = value.utf8.count
            append(name, start: offset, end: offset + length)
            offset += length
        }
    }

    public init(dictionaryLiteral elements: (String, String)...) {
        self.init(captures: elements.map { ($0.0, Substring($0.1)) })
    }

    /// The number of parameters.
    public var count: Int {
        first == nil ? 0 : second == nil ? 1 : third == nil ? 2 : fourth == nil ? 3 : 4 + more.count
    }

    /// Adds a capture after the others: the bytes `start..<end` of the path (the router, walking
    /// the pattern).
    @inline(__always)
    mutating func append(_ name: String, start: Int, end: Int) {
        if first == nil {
            first = (name, start, end)
        } else if second == nil {
            second = (name, start, end)
        } else if third == nil {
            third = (name, start, end)
        } else if fourth == nil {
            fourth = (name, start, end)
        } else {
            more.append((name, start, end))
        }
    }

    /// Takes back the last capture (the router, backtracking).
    @inline(__always)
    mutating func removeLast() {
        if !more.isEmpty {
            more.removeLast()
        } else if fourth != nil {
            fourth = nil
        } else if third != nil {
            third = nil
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
        case 2: return third!
        case 3: return fourth!
        default: return more[index - 4]
        }
    }

    /// The value of an entry, as a piece of `text`.
    private func value(_ entry: Entry) -> Substring {
        let utf8 = text.utf8
        let start = utf8.index(utf8.startIndex, offsetBy: entry.start)
        return Substring(utf8[start..<utf8.index(start, offsetBy: entry.end - entry.start)])
    }

    /// The piece of the path captured under `name`, without making a String of it: for handlers
    /// that read its bytes (the bucket's signed path).
    public func substring(_ name: String) -> Substring? {
        if let first, first.name == name { return value(first) }
        if let second, second.name == name { return value(second) }
        if let third, third.name == name { return value(third) }
        if let fourth, fourth.name == name { return value(fourth) }
        for entry in more where entry.name == name { return value(entry) }
        return nil
    }

    /// The value captured under `name`, or nil when the route has no such parameter.
    public subscript(name: String) -> String? { substring(name).map(String.init) }

    /// The parameter names, in pattern order.
    public var names: [String] { (0..<count).map { entry($0).name } }

    public static func == (lhs: HTTPPathParameters, rhs: HTTPPathParameters) -> Bool {
        lhs.count == rhs.count
            && (0..<lhs.count).allSatisfy { rhs.substring(lhs.entry($0).name) == lhs.value(lhs.entry($0)) }
    }

    public var description: String {
        "[" + (0..<count).map { "\(entry($0).name): \(value(entry($0)))" }.joined(separator: ", ") + "]"
    }
}
