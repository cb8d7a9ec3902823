/// The values captured by a route's `:name` and `*name` segments, looked up by name.
///
/// Kept as where each value lies in the request path (UTF-8 offsets into it), in pattern order: a
/// request usually has one or two and its handler reads each once, so a list beats a dictionary,
/// and a value becomes a `Substring` (or a `String`) only when it is read. A capture is three
/// numbers (its name's index in a list of names and its offsets), the first four stored inline (the signed
/// size URL has four) and only a fifth on in an array, so matching a route allocates nothing for its
/// captures, and taking one back while backtracking is forgetting three numbers.
///
/// Small on purpose (decision 041, round 7): the server copies and destroys the parameters of every
/// request several times, and only `text`, `namePool` and `more` are counted references. Inline
/// entries of names (Strings) in optional tuples made each copy and destruction go through generic
/// tuple witnesses, ~1,000 instructions a request even for a route without parameters. The router
/// names its captures by index into its table's list of names and gives the parameters that list
/// and the path only when something was captured: a route without parameters gets the empty value.
public struct HTTPPathParameters: Sendable, Equatable, ExpressibleByDictionaryLiteral, CustomStringConvertible {
    /// One capture: the index of its name in `namePool` and the UTF-8 offsets of its value in `text`.
    /// Trivial (numbers only), so copying the inline ones is copying bytes.
    struct Entry: Equatable {
        var name: Int32
        var start: Int32
        var end: Int32

        init(name: Int, start: Int, end: Int) {
            // Offsets into a request path (at most `HTTPLimits.requestLineBytes`) or hand-made values.
            self.name = Int32(name)
            self.start = Int32(start)
            self.end = Int32(end)
        }
    }

    /// The text the values are pieces of: the request's decoded path (for parameters given by
    /// hand, their values one after another). Empty while nothing is captured.
    private var text: String
    /// The names the entries point into: the route table's list (shared, not copied), or the
    /// names given by hand.
    private var namePool: [String]
    /// How many captures there are.
    private var stored: Int32 = 0
    private var first = Entry(name: 0, start: 0, end: 0)
    private var second = Entry(name: 0, start: 0, end: 0)
    private var third = Entry(name: 0, start: 0, end: 0)
    private var fourth = Entry(name: 0, start: 0, end: 0)
    /// The fifth capture on, in order.
    private var more: [Entry] = []

    /// No parameters.
    public init() {
        text = ""
        namePool = []
    }

    init(captures: [(String, Substring)]) {
        text = captures.map { String($0.1) }.joined()
        namePool = captures.map(\.0)
        var offset = 0
        for (index, (_, value)) in captures.enumerated() {
            let length = value.utf8.count
            append(nameIndex: index, start: offset, end: offset + length)
            offset += length
        }
    }

    public init(dictionaryLiteral elements: (String, String)...) {
        self.init(captures: elements.map { ($0.0, Substring($0.1)) })
    }

    /// The number of parameters.
    public var count: Int { Int(stored) }

    /// Gives captures made by `append(nameIndex:start:end:)` their path and names (the router,
    /// once a route matched with at least one capture).
    mutating func attach(path: String, names: [String]) {
        text = path
        namePool = names
    }

    /// Adds a capture after the others: the name at `nameIndex` of the names `attach` gives, and
    /// the bytes `start..<end` of the path (the router, walking the pattern).
    @inline(__always)
    mutating func append(nameIndex: Int, start: Int, end: Int) {
        let entry = Entry(name: nameIndex, start: start, end: end)
        switch stored {
        case 0: first = entry
        case 1: second = entry
        case 2: third = entry
        case 3: fourth = entry
        default: more.append(entry)
        }
        stored += 1
    }

    /// Takes back the last capture (the router, backtracking).
    @inline(__always)
    mutating func removeLast() {
        guard stored > 0 else { return }
        if stored > 4 { more.removeLast() }
        stored -= 1
    }

    /// The capture at `index` (pattern order).
    private func entry(_ index: Int) -> Entry {
        switch index {
        case 0: return first
        case 1: return second
        case 2: return third
        case 3: return fourth
        default: return more[index - 4]
        }
    }

    /// The value of an entry, as a piece of `text`. A value that ends the text (a `*name` capture,
    /// the bucket's key) ends at its `endIndex`, with no second offset walk (decision 041, round 10).
    private func value(_ entry: Entry) -> Substring {
        let utf8 = text.utf8
        let start = utf8.index(utf8.startIndex, offsetBy: Int(entry.start))
        let end =
            Int(entry.end) == utf8.count ? utf8.endIndex : utf8.index(start, offsetBy: Int(entry.end - entry.start))
        return Substring(utf8[start..<end])
    }

    /// The name of an entry.
    private func name(_ entry: Entry) -> String { namePool[Int(entry.name)] }

    /// The piece of the path captured under `name`, without making a String of it: for handlers
    /// that read its bytes (the bucket's signed path).
    public func substring(_ name: String) -> Substring? {
        for index in 0..<count {
            let entry = entry(index)
            if self.name(entry) == name { return value(entry) }
        }
        return nil
    }

    /// The value captured under `name`, or nil when the route has no such parameter.
    public subscript(name: String) -> String? { substring(name).map(String.init) }

    /// The parameter names, in pattern order.
    public var names: [String] { (0..<count).map { name(entry($0)) } }

    public static func == (lhs: HTTPPathParameters, rhs: HTTPPathParameters) -> Bool {
        lhs.count == rhs.count
            && (0..<lhs.count).allSatisfy { rhs.substring(lhs.name(lhs.entry($0))) == lhs.value(lhs.entry($0)) }
    }

    public var description: String {
        "[" + (0..<count).map { "\(name(entry($0))): \(value(entry($0)))" }.joined(separator: ", ") + "]"
    }
}
