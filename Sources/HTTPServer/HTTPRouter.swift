/// Maps a method and path to a route, and a path to the error responder of its URL space.
///
/// Patterns are split into segments once, into a tree: literal segments are dictionary lookups,
/// `:name` captures one segment, a final `*name` captures the rest. Literals win over parameters,
/// parameters over the rest-capture, with backtracking. No regular expressions.
/// Configure it before `HTTPServer.start()`; it is read-only while serving.
public final class HTTPRouter: @unchecked Sendable {
    /// A node of the pattern tree: one path segment.
    final class Node {
        var literals: [String: Node] = [:]
        var parameter: (name: String, node: Node)?
        var rest: (name: String, node: Node)?
        var routes: [HTTPMethod: HTTPRoute] = [:]
    }

    /// What a lookup found.
    enum Match {
        /// A route for the method, with the captured parameters.
        case route(HTTPRoute, parameters: [String: String])
        /// The path exists but not for this method; `allow` lists the methods it has.
        case methodNotAllowed(allow: String)
        /// An `OPTIONS` request for an existing path (answered by the server with 204 + `Allow`).
        case options(allow: String)
        /// No route has this path.
        case notFound
    }

    private let root = Node()
    private var mounts: [(prefix: String, responder: HTTPErrorResponder)] = []
    /// The responder for paths under no mount.
    public var defaultErrorResponder: HTTPErrorResponder = PlainTextErrorResponder()

    /// An empty router.
    public init() {}

    /// Adds a route. A later route for the same method and pattern replaces the earlier one.
    public func add(_ route: HTTPRoute) {
        var node = root
        let segments = Self.segments(route.pattern)
        for (index, segment) in segments.enumerated() {
            if segment.hasPrefix(":") {
                let name = String(segment.dropFirst())
                if let existing = node.parameter {
                    node = existing.node
                } else {
                    let child = Node()
                    node.parameter = (name, child)
                    node = child
                }
            } else if segment.hasPrefix("*") && index == segments.count - 1 {
                let name = String(segment.dropFirst())
                if let existing = node.rest {
                    node = existing.node
                } else {
                    let child = Node()
                    node.rest = (name, child)
                    node = child
                }
            } else {
                let key = String(segment)
                if let child = node.literals[key] {
                    node = child
                } else {
                    let child = Node()
                    node.literals[key] = child
                    node = child
                }
            }
        }
        node.routes[route.method] = route
    }

    /// Adds a route from its parts.
    public func add(
        _ method: HTTPMethod, _ pattern: String, maxBodyBytes: Int? = nil, mayBlock: Bool = true,
        _ body: @escaping @Sendable (HTTPRequest) throws -> HTTPResponse
    ) {
        add(HTTPRoute(method, pattern, maxBodyBytes: maxBodyBytes, mayBlock: mayBlock, body))
    }

    /// Uses `errorResponder` for every path equal to `prefix` or below it (`/parse` covers
    /// `/parse/classes/Photo`, not `/parsec`). The longest matching prefix wins.
    public func mount(prefix: String, errorResponder: HTTPErrorResponder) {
        var normalized = prefix
        while normalized.count > 1 && normalized.hasSuffix("/") { normalized.removeLast() }
        mounts.append((normalized, errorResponder))
        mounts.sort { $0.prefix.utf8.count > $1.prefix.utf8.count }
    }

    /// The error responder for a path.
    public func errorResponder(for path: String) -> HTTPErrorResponder {
        for mount in mounts {
            if mount.prefix == "/" { return mount.responder }
            if path.hasPrefix(mount.prefix) {
                let rest = path.utf8.dropFirst(mount.prefix.utf8.count)
                if rest.isEmpty || rest.first == UInt8(ascii: "/") { return mount.responder }
            }
        }
        return defaultErrorResponder
    }

    /// Finds the route for a method and decoded path. HEAD falls back to GET (RFC 9110 §9.3.2).
    func match(method: HTTPMethod, path: String) -> Match {
        let segments = Self.segments(path)
        var captures: [(String, Substring)] = []
        var firstPathMatch: Node?
        let found = Self.search(root, segments, 0, &captures) { node in
            if node.routes.isEmpty { return false }
            if firstPathMatch == nil { firstPathMatch = node }
            return node.routes[method] != nil || (method == .head && node.routes[.get] != nil)
        }
        if let found {
            let route = found.routes[method] ?? found.routes[.get]!
            var parameters: [String: String] = [:]
            if !captures.isEmpty {
                parameters.reserveCapacity(captures.count)
                for (name, value) in captures { parameters[name] = String(value) }
            }
            return .route(route, parameters: parameters)
        }
        guard let node = firstPathMatch else { return .notFound }
        let allow = Self.allow(node)
        return method == .options ? .options(allow: allow) : .methodNotAllowed(allow: allow)
    }

    /// The `Allow` value for a node: its methods, HEAD when GET exists, and OPTIONS.
    private static func allow(_ node: Node) -> String {
        var methods = Set(node.routes.keys.map(\.rawValue))
        if methods.contains("GET") { methods.insert("HEAD") }
        methods.insert("OPTIONS")
        return methods.sorted().joined(separator: ", ")
    }

    private static func search(
        _ node: Node, _ segments: [Substring], _ index: Int, _ captures: inout [(String, Substring)],
        _ accept: (Node) -> Bool
    ) -> Node? {
        if index == segments.count { return accept(node) ? node : nil }
        let segment = segments[index]
        if let child = node.literals[String(segment)], let hit = search(child, segments, index + 1, &captures, accept) {
            return hit
        }
        if let (name, child) = node.parameter, !segment.isEmpty {
            captures.append((name, segment))
            if let hit = search(child, segments, index + 1, &captures, accept) { return hit }
            captures.removeLast()
        }
        if let (name, child) = node.rest {
            let start = segment.startIndex
            let end = segments[segments.count - 1].endIndex
            captures.append((name, segment.base[start..<end]))
            if accept(child) { return child }
            captures.removeLast()
        }
        return nil
    }

    /// `/a/b/` → `["a", "b", ""]`; `/` → `[""]`.
    static func segments(_ path: String) -> [Substring] {
        // Split on the UTF-8 view: Character-based splitting is several times slower.
        let utf8 = path.utf8
        var start = utf8.startIndex
        if start != utf8.endIndex && utf8[start] == UInt8(ascii: "/") { start = utf8.index(after: start) }
        var segments: [Substring] = []
        segments.reserveCapacity(8)
        var i = start
        while i != utf8.endIndex {
            if utf8[i] == UInt8(ascii: "/") {
                segments.append(Substring(utf8[start..<i]))
                start = utf8.index(after: i)
            }
            i = utf8.index(after: i)
        }
        segments.append(Substring(utf8[start..<utf8.endIndex]))
        return segments
    }
}
