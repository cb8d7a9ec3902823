import Foundation

/// Maps a method and path to a route, and a path to the error responder of its URL space.
///
/// Patterns are split into segments once, into a tree: literal segments are compared by bytes (a
/// dictionary for segments that are not ASCII), `:name` captures one segment, a final `*name`
/// captures the rest. Literals win over parameters,
/// parameters over the rest-capture, with backtracking. No regular expressions. Lookups walk the
/// tree laid out flat (`HTTPRouteTable`): indices and byte ranges, no reference counting.
/// Configure it before `HTTPServer.start()`; it is read-only while serving.
// @unchecked: configured before `HTTPServer.start()`, only read while serving (no lock per request).
public final class HTTPRouter: @unchecked Sendable {
    /// A node of the pattern tree: one path segment.
    final class Node {
        /// Keyed by Substring, for segments that are not ASCII (matched by canonical equivalence,
        /// as String keys are).
        var literals: [Substring: Node] = [:]
        /// The same literals as UTF-8 bytes, scanned in order: comparing a segment's length and
        /// bytes costs far less than hashing it (decision 041).
        var literalBytes: [(key: [UInt8], node: Node)] = []
        /// Whether every literal is ASCII (route patterns are): then a segment equals one exactly
        /// when its bytes do.
        var literalsAreASCII = true

        /// The child for a literal segment (the bytes of the path from `start` to `end`), or nil.
        /// `pathIsASCII`: whether the whole path is, so its bytes decide.
        func literal(_ path: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int, pathIsASCII: Bool) -> Node? {
            let length = end - start
            if literalsAreASCII && pathIsASCII {
                guard let base = path.baseAddress else { return nil }
                for entry in literalBytes where entry.key.count == length {
                    let equal = entry.key.withUnsafeBufferPointer { key -> Bool in
                        var i = 0
                        while i < length && key[i] == base[start + i] { i += 1 }
                        return i == length
                    }
                    if equal { return entry.node }
                }
                return nil
            }
            let segment = String(decoding: UnsafeBufferPointer(rebasing: path[start..<end]), as: UTF8.self)
            return literals[Substring(segment)]
        }

        /// This node's index in the router's flat table (`HTTPRouteTable`).
        var index = 0

        var parameter: (name: String, node: Node)?
        var rest: (name: String, node: Node)?
        /// A handful per node at most, so a list scanned in order beats hashing the method.
        var routes: [(method: HTTPMethod, route: HTTPRoute)] = [] {
            didSet { servesOtherThanOptions = routes.contains { $0.method != .options } }
        }
        /// Whether a route here answers a method other than OPTIONS (kept with `routes`).
        private(set) var servesOtherThanOptions = false

        func route(for method: HTTPMethod) -> HTTPRoute? {
            for entry in routes where entry.method == method { return entry.route }
            return nil
        }
    }

    /// What a lookup found.
    enum Match {
        /// A route for the method, with the captured parameters.
        case route(HTTPRoute, parameters: HTTPPathParameters)
        /// The path exists but not for this method; `allow` lists the methods it has.
        case methodNotAllowed(allow: String)
        /// An `OPTIONS` request for an existing path (answered by the server with 204 + `Allow`).
        case options(allow: String)
        /// No route has this path.
        case notFound
    }

    private let root = Node()
    /// The tree as flat arrays, for lookups (made again after each insert).
    private var table: HTTPRouteTable
    /// Every route added, in order, as served (wrapped in its middleware): for route listings and
    /// the OpenAPI check.
    public private(set) var routes: [HTTPRoute] = []
    /// The router's own middleware, outermost first (`add(middleware:)`).
    private var middleware: [any HTTPMiddleware] = []
    private var mounts: [(prefix: String, responder: HTTPErrorResponder)] = []
    /// The responder for paths under no mount.
    public var defaultErrorResponder: HTTPErrorResponder = PlainTextErrorResponder()

    /// An empty router.
    public init() { table = HTTPRouteTable(root: root) }

    /// Adds a route, wrapped in the middleware added to the router so far (`add(middleware:)`).
    /// A second route for the same method and pattern is a programmer error: it stops the process
    /// with both named (`HTTPRouterError.duplicateRoute`), rather than one silently replacing the other.
    public func add(_ route: HTTPRoute) {
        insertOrFail(Self.wrap(route, in: middleware))
    }

    /// Adds `middleware` after (inside) the router's own: it applies to routes added from now on,
    /// directly or through groups made from now on (`group`).
    public func add(middleware: any HTTPMiddleware) {
        self.middleware.append(middleware)
    }

    /// A group whose routes go through the router's middleware, then `middleware` (the first outermost).
    public func group(_ middleware: any HTTPMiddleware...) -> HTTPRouteGroup {
        HTTPRouteGroup(router: self, middleware: self.middleware + middleware)
    }

    /// `route` as served through `middleware`: the first listed ends up outermost. Built once, here.
    static func wrap(_ route: HTTPRoute, in middleware: [any HTTPMiddleware]) -> HTTPRoute {
        middleware.reversed().reduce(route) { route, middleware in middleware.wrap(route) }
    }

    /// `insert`, stopping the process on a duplicate route (a mistake in the code, not in input).
    func insertOrFail(_ route: HTTPRoute) {
        do {
            try insert(route)
        } catch {
            preconditionFailure("\(error)")
        }
    }

    /// Puts a route into the pattern tree, or throws when one for its method and pattern is there.
    func insert(_ route: HTTPRoute) throws(HTTPRouterError) {
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
                let key = Substring(String(segment))
                if let child = node.literals[key] {
                    node = child
                } else {
                    let child = Node()
                    node.literals[key] = child
                    node.literalBytes.append((Array(key.utf8), child))
                    if key.utf8.contains(where: { $0 >= 0x80 }) { node.literalsAreASCII = false }
                    node = child
                }
            }
        }
        if let existing = node.route(for: route.method) {
            throw .duplicateRoute(method: route.method, pattern: route.pattern, existing: existing.pattern)
        }
        node.routes.append((route.method, route))
        routes.append(route)
        table = HTTPRouteTable(root: root)
    }

    /// Adds a route from its parts.
    public func add(
        _ method: HTTPMethod, _ pattern: String, maxBodyBytes: Int? = nil, mayBlock: Bool = true,
        _ body: @escaping @Sendable (HTTPRequest) throws -> HTTPResponse
    ) {
        add(HTTPRoute(method, pattern, maxBodyBytes: maxBodyBytes, mayBlock: mayBlock, body))
    }

    /// Uses `errorResponder` for every path equal to `prefix` or below it (`/parse` covers
    /// `/parse/classes/Photo`, not `/parsec`). The longest matching prefix wins; mounting a prefix
    /// again replaces its responder (to decorate it, e.g. with CORS headers).
    public func mount(prefix: String, errorResponder: HTTPErrorResponder) {
        var normalized = prefix
        while normalized.count > 1 && normalized.hasSuffix("/") { normalized.removeLast() }
        mounts.removeAll { $0.prefix == normalized }
        mounts.append((normalized, errorResponder))
        mounts.sort { $0.prefix.utf8.count > $1.prefix.utf8.count }
    }

    /// The error responder for a path.
    public func errorResponder(for path: String) -> HTTPErrorResponder {
        let utf8 = path.utf8
        for mount in mounts {
            if mount.prefix == "/" { return mount.responder }
            let prefix = mount.prefix.utf8
            guard utf8.count >= prefix.count, utf8.starts(with: prefix) else { continue }
            if utf8.count == prefix.count
                || utf8[utf8.index(utf8.startIndex, offsetBy: prefix.count)] == UInt8(ascii: "/")
            {
                return mount.responder
            }
        }
        return defaultErrorResponder
    }

    /// The route for a method and decoded path with the parameters it captured, or nil when no
    /// route has both: for requests that did not arrive on a connection, such as the sub-requests
    /// of Parse's `POST /batch`, which run through the same routes as the requests they stand for.
    public func route(method: HTTPMethod, path: String) -> (route: HTTPRoute, parameters: HTTPPathParameters)? {
        guard case .route(let route, let parameters) = match(method: method, path: path) else { return nil }
        return (route, parameters)
    }

    /// Finds the route for a method and decoded path. HEAD falls back to GET (RFC 9110 §9.3.2).
    func match(method: HTTPMethod, path: String) -> Match {
        // Walks the path's bytes segment by segment, by offsets, through the flat table; captures
        // are offsets too, and become Substrings only when a handler reads them (decisions 041, 059).
        var captures = HTTPPathParameters()
        let table = self.table
        // The method's bit, found once: the walk tests nodes with it, and the route is taken by it.
        let bit = HTTPRouteTable.Methods(method)
        var bytes = path
        let found = bytes.withUTF8 { path -> HTTPRouteTable.Found in
            let start = path.first == UInt8(ascii: "/") ? 1 : 0
            let ascii = ASCIIScan.isASCII(UnsafeRawBufferPointer(path))
            return table.search(path, from: start, pathIsASCII: ascii, method: method, bit: bit, captures: &captures)
        }
        if found.node >= 0 {
            let route = table.route(at: found.node, method: method, bit: bit)
            // Captures name their names by index into the table's list: given it (and the path)
            // only when there are any; a route without parameters gets the empty value, not a copy.
            guard captures.count > 0 else { return .route(route, parameters: HTTPPathParameters()) }
            captures.attach(path: path, names: table.names)
            return .route(route, parameters: captures)
        }
        guard found.firstPathMatch >= 0 else { return .notFound }
        let allow = Self.allow(table.objects[Int(found.firstPathMatch)])
        return method == .options ? .options(allow: allow) : .methodNotAllowed(allow: allow)
    }

    /// The `Allow` value for a node: its methods, HEAD when GET exists, and OPTIONS.
    private static func allow(_ node: Node) -> String {
        var methods = Set(node.routes.map(\.method.rawValue))
        if methods.contains("GET") { methods.insert("HEAD") }
        methods.insert("OPTIONS")
        return methods.sorted().joined(separator: ", ")
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
