import Foundation

/// What makes an unchanged find or count cheap (issue #17), in two bounded parts:
///
/// - **Tag inputs by query string**: the compiled query's canonical class and normalized
///   parameters, remembered by (class in the path, raw query string, keys' access, caller), so a
///   revalidation computes its `ManifestETag` without parsing and compiling the query again. A
///   query string is remembered only after it compiled, so a bad query is always its error.
/// - **Rendered bodies by ETag**: the JSON of a find or count answer, and its gzip form once a
///   client asked for it, kept under the answer's tag. The tag covers everything the body depends
///   on (the classes' change sequences, the query, the access level, the caller, the public URL
///   and the asset URLs' signing window), so the same tag means the same body: an unchanged page
///   is answered without PostgreSQL. A write anywhere moves a sequence (this server's own at once,
///   `ParseRoutes.writeDone`; another instance's by `NOTIFY`), which gives another tag and a miss.
///   Without a tag (the sequences unknown: listener down) nothing is read or stored. Bounded by
///   bytes (`manifest_cache_bytes`), least recently used first out; 0 keeps no bodies.
final class ManifestCache: @unchecked Sendable {
    /// A find's query string as one caller sends it.
    struct QueryKey: Hashable, Sendable {
        /// The class name as the path gives it.
        let className: String
        /// The raw query string (percent-encoded, in the client's order).
        let query: String
        /// `KeyChecker.Access.rawValue` of the request's keys.
        let access: Int
        /// `ParseAccess.tagKey` of the caller.
        let caller: String
    }

    /// What a find's tag is made of besides the sequences and the per-server URL parts.
    struct TagInputs: Sendable {
        /// The schema's class name.
        let className: String
        /// The classes whose change sequences the answer depends on.
        let dependencies: [String]
        /// The query's parameters in `ManifestETag`'s canonical order.
        let items: [(name: String, value: String)]
    }

    /// Counters for tests and `/metrics`-style inspection.
    struct Stats: Sendable, Equatable {
        var entries = 0
        var bytes = 0
        var hits = 0
        var misses = 0
        var evictions = 0
    }

    /// Query strings remembered; past this the map starts over (a burst of distinct queries or
    /// callers costs a recompile each, never unbounded memory).
    static let maxQueries = 1024
    /// Longer query strings are not remembered (at most `maxQueries` × this in keys).
    static let maxQueryBytes = 2048
    /// Bytes counted per body entry besides its bodies and tag (node, dictionary slot).
    static let entryOverhead = 128

    /// The bound on kept bodies, in bytes (bodies, gzip forms, tags and overhead); 0 keeps none.
    let maxBytes: Int
    private let lock = NSLock()
    private var inputs: [QueryKey: TagInputs] = [:]
    private var entries: [String: Node] = [:]
    /// Most recently used first.
    private var newest: Node?
    private var oldest: Node?
    private var stats = Stats()

    private final class Node {
        let tag: String
        let body: [UInt8]
        var gzip: [UInt8]?
        var newer: Node?
        var older: Node?
        var cost: Int { tag.utf8.count + body.count + (gzip?.count ?? 0) + ManifestCache.entryOverhead }

        init(tag: String, body: [UInt8]) {
            self.tag = tag
            self.body = body
        }
    }

    /// A cache keeping at most `maxBytes` of rendered bodies (0: none; the tag inputs are kept anyway).
    init(maxBytes: Int) {
        self.maxBytes = max(0, maxBytes)
    }

    /// Whether bodies are kept at all.
    var keepsBodies: Bool { maxBytes > 0 }

    // MARK: - Tag inputs

    /// The tag inputs remembered for a query string, or nil.
    func tagInputs(_ key: QueryKey) -> TagInputs? {
        lock.withLock { inputs[key] }
    }

    /// Remembers a compiled query's tag inputs for its query string.
    func remember(_ value: TagInputs, for key: QueryKey) {
        guard key.query.utf8.count <= Self.maxQueryBytes else { return }
        lock.withLock {
            if inputs.count >= Self.maxQueries && inputs[key] == nil { inputs.removeAll(keepingCapacity: true) }
            inputs[key] = value
        }
    }

    // MARK: - Bodies

    /// The body kept under `tag` (and its gzip form when made), the most recently used from now on; counts a hit or miss.
    func body(for tag: String) -> (body: [UInt8], gzip: [UInt8]?)? {
        guard keepsBodies else { return nil }
        return lock.withLock {
            guard let node = entries[tag] else {
                stats.misses += 1
                return nil
            }
            stats.hits += 1
            moveToFront(node)
            return (node.body, node.gzip)
        }
    }

    /// Keeps `body` under `tag`, dropping the least recently used entries to stay within `maxBytes`.
    /// A body larger than a quarter of the bound is not kept (it would flush the others).
    func store(_ body: [UInt8], for tag: String) {
        let node = Node(tag: tag, body: body)
        guard keepsBodies, node.cost <= maxBytes / 4 else { return }
        lock.withLock {
            if let old = entries.removeValue(forKey: tag) {
                unlink(old)
                stats.bytes -= old.cost
            }
            entries[tag] = node
            linkAtFront(node)
            stats.bytes += node.cost
            evictToBound()
        }
    }

    /// Adds the gzip form of the body kept under `tag` (if it still is, and the bound allows).
    func storeGzip(_ gzip: [UInt8], for tag: String) {
        guard keepsBodies else { return }
        lock.withLock {
            guard let node = entries[tag], node.gzip == nil else { return }
            node.gzip = gzip
            stats.bytes += gzip.count
            moveToFront(node)
            evictToBound()
        }
    }

    /// Forgets every body (the tag inputs stay: they depend on no data).
    func removeAllBodies() {
        lock.withLock {
            entries.removeAll()
            newest = nil
            oldest = nil
            stats.bytes = 0
        }
    }

    /// The counters now.
    var currentStats: Stats {
        lock.withLock {
            var now = stats
            now.entries = entries.count
            return now
        }
    }

    // MARK: - The LRU list (under the lock)

    private func evictToBound() {
        while stats.bytes > maxBytes, let victim = oldest {
            unlink(victim)
            entries.removeValue(forKey: victim.tag)
            stats.bytes -= victim.cost
            stats.evictions += 1
        }
    }

    private func moveToFront(_ node: Node) {
        guard newest !== node else { return }
        unlink(node)
        linkAtFront(node)
    }

    private func linkAtFront(_ node: Node) {
        node.older = newest
        node.newer = nil
        newest?.newer = node
        newest = node
        if oldest == nil { oldest = node }
    }

    private func unlink(_ node: Node) {
        if let newer = node.newer { newer.older = node.older } else if newest === node { newest = node.older }
        if let older = node.older { older.newer = node.newer } else if oldest === node { oldest = node.newer }
        node.newer = nil
        node.older = nil
    }
}
