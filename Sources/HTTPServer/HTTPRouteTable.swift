import Foundation

/// The router's pattern tree laid out in arrays of plain values, made again after each route is
/// added: a lookup walks it by index through buffer pointers, so it retains and releases no node,
/// literal or name along the way and allocates nothing (decision 059). The tree's own nodes
/// (`HTTPRouter.Node`) stay the source: they hold the routes, and the literals that are not ASCII.
final class HTTPRouteTable {
    /// One node of the tree.
    struct Node {
        /// Its literal segments: `literals[firstLiteral ..< firstLiteral + literalCount]`.
        var firstLiteral: Int32 = 0
        var literalCount: Int32 = 0
        /// The `:name` child (an index into `nodes`) and its name (into `names`), or -1.
        var parameter: Int32 = -1
        var parameterName: Int32 = -1
        /// The final `*name` child and its name, or -1.
        var rest: Int32 = -1
        var restName: Int32 = -1
        /// The methods of the routes that end here.
        var methods: Methods = []
        /// Whether every literal is ASCII: then a segment of an ASCII path equals one exactly when
        /// its bytes do; otherwise the node's `HTTPRouter.Node` compares by canonical equivalence.
        var literalsAreASCII = true
    }

    /// A literal segment: its bytes (`bytes[offset ..< offset + length]`) and the node it leads to.
    struct Literal {
        var offset: Int32
        var length: Int32
        var child: Int32
    }

    /// A set of methods: the common ones by bit, any other as `other` (then the node's routes say).
    struct Methods: OptionSet {
        let rawValue: UInt8
        static let get = Methods(rawValue: 1 << 0)
        static let head = Methods(rawValue: 1 << 1)
        static let post = Methods(rawValue: 1 << 2)
        static let put = Methods(rawValue: 1 << 3)
        static let patch = Methods(rawValue: 1 << 4)
        static let delete = Methods(rawValue: 1 << 5)
        static let options = Methods(rawValue: 1 << 6)
        static let other = Methods(rawValue: 1 << 7)

        /// The bit of one method.
        init(_ method: HTTPMethod) {
            switch method {
            case .get: self = .get
            case .head: self = .head
            case .post: self = .post
            case .put: self = .put
            case .patch: self = .patch
            case .delete: self = .delete
            case .options: self = .options
            default: self = .other
            }
        }

        init(rawValue: UInt8) { self.rawValue = rawValue }

        /// Slots per node in `routes`: one per common method (`get` … `options`).
        static let slotCount = 7
        /// A common method's slot, 0 (`get`) … 6 (`options`): only for one bit, not `other`.
        var slot: Int { rawValue.trailingZeroBitCount }
    }

    let nodes: [Node]
    let literals: [Literal]
    /// Every literal's bytes, one after another.
    let bytes: [UInt8]
    /// The parameter and rest-capture names.
    let names: [String]
    /// The tree's nodes, at the same indices as `nodes`: the routes of a node found.
    let objects: [HTTPRouter.Node]
    /// Each node's routes of the common methods, `Methods.slotCount` slots a node by the method's
    /// bit (`Methods.slot`): the route found is taken without comparing method strings (decision
    /// 041, round 9). A route of another method is only in its node's list.
    let routes: [HTTPRoute?]

    /// The tree under `root`, breadth first (`root` is node 0). Numbers each node (`index`).
    init(root: HTTPRouter.Node) {
        var objects = [root]
        var next = 0
        while next < objects.count {
            let node = objects[next]
            node.index = next
            objects.append(contentsOf: node.literalBytes.map(\.node))
            if let parameter = node.parameter { objects.append(parameter.node) }
            if let rest = node.rest { objects.append(rest.node) }
            next += 1
        }
        var nodes: [Node] = []
        var literals: [Literal] = []
        var bytes: [UInt8] = []
        var names: [String] = []
        var routes = [HTTPRoute?](repeating: nil, count: objects.count * Methods.slotCount)
        nodes.reserveCapacity(objects.count)
        for object in objects {
            var node = Node()
            node.firstLiteral = Int32(literals.count)
            node.literalCount = Int32(object.literalBytes.count)
            node.literalsAreASCII = object.literalsAreASCII
            for (key, child) in object.literalBytes {
                literals.append(
                    Literal(offset: Int32(bytes.count), length: Int32(key.count), child: Int32(child.index)))
                bytes.append(contentsOf: key)
            }
            if let (name, child) = object.parameter {
                node.parameter = Int32(child.index)
                node.parameterName = Int32(names.count)
                names.append(name)
            }
            if let (name, child) = object.rest {
                node.rest = Int32(child.index)
                node.restName = Int32(names.count)
                names.append(name)
            }
            for (method, route) in object.routes {
                let bit = Methods(method)
                node.methods.insert(bit)
                if bit != .other { routes[nodes.count * Methods.slotCount + bit.slot] = route }
            }
            nodes.append(node)
        }
        self.nodes = nodes
        self.literals = literals
        self.bytes = bytes
        self.names = names
        self.objects = objects
        self.routes = routes
    }

    /// The route of node `index` for `method` (of bit `bit`), which `search` found to answer it:
    /// its own, or for HEAD the GET route. By the method's slot for a common method; another
    /// method's is looked up in the node's list.
    func route(at index: Int32, method: HTTPMethod, bit: Methods) -> HTTPRoute {
        if bit != .other {
            let base = Int(index) * Methods.slotCount
            if let route = routes[base + bit.slot] ?? (bit == .head ? routes[base] : nil) { return route }
        }
        let node = objects[Int(index)]
        return node.route(for: method) ?? node.route(for: .get)!
    }

    /// What `search` found: the node whose route answers (or -1), and the first node that has
    /// routes for the path at all (or -1), for 405 and OPTIONS.
    struct Found {
        var node: Int32 = -1
        var firstPathMatch: Int32 = -1
    }

    /// Finds the node for `method` and `path` (a decoded path's UTF-8, from `start`), capturing
    /// into `captures`. Depth first: literal, then parameter, then rest, with backtracking; HEAD
    /// accepts a node with GET. A node with only OPTIONS routes (a CORS preflight catch-all like
    /// `/parse/*path`) exists for OPTIONS alone: to other methods its paths stay unknown.
    func search(
        _ path: UnsafeBufferPointer<UInt8>, from start: Int, pathIsASCII: Bool, method: HTTPMethod, bit: Methods,
        captures: inout HTTPPathParameters
    ) -> Found {
        nodes.withUnsafeBufferPointer { nodes in
            literals.withUnsafeBufferPointer { literals in
                bytes.withUnsafeBufferPointer { bytes in
                    var walk = Walk(
                        table: self, nodes: nodes, literals: literals, bytes: bytes, path: path,
                        pathIsASCII: pathIsASCII, method: method, bit: bit)
                    walk.found.node = walk.search(0, start, &captures)
                    return walk.found
                }
            }
        }
    }

    /// One lookup: the table's buffers, the path and the method.
    private struct Walk {
        unowned(unsafe) let table: HTTPRouteTable
        let nodes: UnsafeBufferPointer<Node>
        let literals: UnsafeBufferPointer<Literal>
        let bytes: UnsafeBufferPointer<UInt8>
        let path: UnsafeBufferPointer<UInt8>
        let pathIsASCII: Bool
        let method: HTTPMethod
        let bit: Methods
        var found = Found()

        /// Matches the segment starting at `segmentStart` (just after a `/`, or the path's end for
        /// an empty last segment) and what follows it; nil: every segment has been consumed.
        mutating func search(_ index: Int32, _ segmentStart: Int?, _ captures: inout HTTPPathParameters) -> Int32 {
            guard let start = segmentStart else { return accepts(index) ? index : -1 }
            let node = nodes[Int(index)]
            let end = nextSlash(from: start)
            let next: Int? = end == path.count ? nil : end + 1
            if node.literalCount > 0 {
                let child = literal(node, index, start, end)
                if child >= 0 {
                    let hit = search(child, next, &captures)
                    if hit >= 0 { return hit }
                }
            }
            if node.parameter >= 0 && end > start {
                captures.append(nameIndex: Int(node.parameterName), start: start, end: end)
                let hit = search(node.parameter, next, &captures)
                if hit >= 0 { return hit }
                captures.removeLast()
            }
            if node.rest >= 0 {
                captures.append(nameIndex: Int(node.restName), start: start, end: path.count)
                if accepts(node.rest) { return node.rest }
                captures.removeLast()
            }
            return -1
        }

        /// The child of `node` for the literal segment `start..<end` of the path, or -1.
        private func literal(_ node: Node, _ index: Int32, _ start: Int, _ end: Int) -> Int32 {
            guard node.literalsAreASCII && pathIsASCII else {
                let object = table.objects[Int(index)]
                return object.literal(path, start, end, pathIsASCII: pathIsASCII).map { Int32($0.index) } ?? -1
            }
            let length = end - start
            guard let base = path.baseAddress, let pool = bytes.baseAddress else { return -1 }
            let first = Int(node.firstLiteral)
            for i in first..<first + Int(node.literalCount) {
                let literal = literals[i]
                guard Int(literal.length) == length else { continue }
                if length == 0 || memcmp(pool + Int(literal.offset), base + start, length) == 0 { return literal.child }
            }
            return -1
        }

        /// Whether `index` has a route for the method (HEAD: or GET); notes the first node with
        /// routes for the path that the method may see.
        private mutating func accepts(_ index: Int32) -> Bool {
            let methods = nodes[Int(index)].methods
            if methods.isEmpty { return false }
            if bit != .options && methods.subtracting(.options).isEmpty { return false }
            if found.firstPathMatch < 0 { found.firstPathMatch = index }
            if bit == .other || methods.contains(.other) {
                let object = table.objects[Int(index)]
                return object.route(for: method) != nil || (bit == .head && object.route(for: .get) != nil)
            }
            return methods.contains(bit) || (bit == .head && methods.contains(.get))
        }

        /// The offset of the first `/` at or after `start`, or the path's length: `memchr`, a word at
        /// a time, as a signed asset's segments are up to 43 bytes.
        @inline(__always)
        private func nextSlash(from start: Int) -> Int {
            guard let base = path.baseAddress, start < path.count else { return path.count }
            guard let hit = memchr(base + start, Int32(UInt8(ascii: "/")), path.count - start) else {
                return path.count
            }
            return UnsafeRawPointer(hit) - UnsafeRawPointer(base)
        }
    }
}
