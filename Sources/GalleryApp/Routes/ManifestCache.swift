import Foundation
import HTTPServer

/// What makes an unchanged find or count cheap (issue #17), in two bounded parts:
///
/// - **Tag inputs by query string**: the compiled query's canonical class and normalized
///   parameters, remembered by (class in the path, raw query string, keys' access, caller), so a
///   revalidation computes its `ManifestETag` without parsing and compiling the query again. A
///   query string is remembered only after it compiled, so a bad query is always its error. The
///   tag made from them is kept beside them (`KnownTag`, with its bytes and response headers)
///   under the `TagVersion` it was made for, so a revalidation while nothing changed makes nothing.
/// - **Rendered bodies by ETag**: the JSON of a find or count answer, and its gzip form once a
///   client asked for it, kept under the answer's tag. The tag covers everything the body depends
///   on (the classes' change sequences, the query, the access level, the caller, the public URL
///   and the asset URLs' signing window), so the same tag means the same body: an unchanged page
///   is answered without PostgreSQL. A write anywhere moves a sequence (this server's own at once,
///   `ClassChangeSequences.refreshAfterWrite`; another instance's by `NOTIFY`), which gives another tag and a miss.
///   Without a tag (the sequences unknown: listener down) nothing is read or stored. Bounded by
///   bytes (`manifest_cache_bytes`), least recently used first out; 0 keeps no bodies.
final class ManifestCache: Sendable {
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
        /// The change sequences the answer depends on (`ClassChangeSequences.dependencies(of:for:)`).
        let dependencies: [String]
        /// The query's parameters in `ManifestETag`'s canonical order.
        let items: [(name: String, value: String)]
    }

    /// What a kept tag was made from besides its query string's inputs: while these are the same,
    /// so is the tag.
    struct TagVersion: Equatable, Sendable {
        /// `ClassChangeSequences.stamp()` when the sequences were read.
        let stamp: UInt64
        /// The public URL the answer's file URLs start with.
        let publicURL: String
        /// The asset URLs' signing window (their expiry), nil when they are not signed.
        let assetWindow: Int64?
    }

    /// A tag made once and reused by every revalidation while its `TagVersion` holds: the text, its
    /// opaque part as bytes (what `If-None-Match` is compared with) and the headers every GET
    /// answer under it carries (`ETag`, `Cache-Control`), so a 304 builds nothing.
    struct KnownTag: Sendable {
        /// `W/"<32 hex digits>"`.
        let value: String
        /// The quoted part as UTF-8 bytes (`ManifestETag.opaque`).
        let opaque: [UInt8]
        /// The header fields of a GET answer under this tag.
        let headers: HTTPHeaders

        /// A tag and the headers of the GET answers that carry it.
        init(_ value: String, cacheControl: String) {
            self.value = value
            self.opaque = ManifestETag.opaque(value)
            self.headers = HTTPHeaders([("ETag", value), ("Cache-Control", cacheControl)])
        }

        /// Whether an `If-None-Match` field value names this tag (`ManifestETag.ifNoneMatch`).
        func isNamed(by field: String) -> Bool { ManifestETag.ifNoneMatch(field, opaque: opaque) }
    }

    /// A query string's tag inputs and the last tag made from them.
    private struct Remembered {
        let inputs: TagInputs
        var tag: (version: TagVersion, tag: KnownTag)?
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
    private let state = SleepingMutex(State())

    /// The remembered inputs and the kept bodies with their LRU list, under the mutex.
    private struct State {
        var inputs: [QueryKey: Remembered] = [:]
        var entries: [String: Node] = [:]
        /// Most recently used first.
        var newest: Node?
        var oldest: Node?
        var stats = Stats()

        mutating func evictToBound(_ maxBytes: Int) {
            while stats.bytes > maxBytes, let victim = oldest {
                unlink(victim)
                entries.removeValue(forKey: victim.tag)
                stats.bytes -= victim.cost
                stats.evictions += 1
            }
        }

        mutating func moveToFront(_ node: Node) {
            guard newest !== node else { return }
            unlink(node)
            linkAtFront(node)
        }

        mutating func linkAtFront(_ node: Node) {
            node.older = newest
            node.newer = nil
            newest?.newer = node
            newest = node
            if oldest == nil { oldest = node }
        }

        mutating func unlink(_ node: Node) {
            if let newer = node.newer { newer.older = node.older } else if newest === node { newest = node.older }
            if let older = node.older { older.newer = node.newer } else if oldest === node { oldest = node.newer }
            node.newer = nil
            node.older = nil
        }
    }

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
        state.withLock { $0.inputs[key]?.inputs }
    }

    /// The tag inputs remembered for a query string, or nil, and the tag kept with them when it
    /// was made for `version` (else nil: make it, and `keep` it).
    func lookUp(_ key: QueryKey, version: TagVersion) -> (inputs: TagInputs, tag: KnownTag?)? {
        state.withLock { state in
            guard let found = state.inputs[key] else { return nil }
            guard let made = found.tag, made.version == version else { return (found.inputs, nil) }
            return (found.inputs, made.tag)
        }
    }

    /// Keeps `tag`, made for `version`, beside the query string's inputs (if they are still remembered).
    func keep(_ tag: KnownTag, version: TagVersion, for key: QueryKey) {
        state.withLock { $0.inputs[key]?.tag = (version, tag) }
    }

    /// Remembers a compiled query's tag inputs for its query string.
    func remember(_ value: TagInputs, for key: QueryKey) {
        guard key.query.utf8.count <= Self.maxQueryBytes else { return }
        state.withLock { state in
            if state.inputs.count >= Self.maxQueries && state.inputs[key] == nil {
                state.inputs.removeAll(keepingCapacity: true)
            }
            state.inputs[key] = Remembered(inputs: value)
        }
    }

    // MARK: - Bodies

    /// The body kept under `tag` (and its gzip form when made), the most recently used from now on; counts a hit or miss.
    func body(for tag: String) -> (body: [UInt8], gzip: [UInt8]?)? {
        guard keepsBodies else { return nil }
        return state.withLock { state in
            guard let node = state.entries[tag] else {
                state.stats.misses += 1
                return nil
            }
            state.stats.hits += 1
            state.moveToFront(node)
            return (node.body, node.gzip)
        }
    }

    /// Keeps `body` under `tag`, dropping the least recently used entries to stay within `maxBytes`.
    /// A body larger than a quarter of the bound is not kept (it would flush the others).
    func store(_ body: [UInt8], for tag: String) {
        guard keepsBodies, tag.utf8.count + body.count + Self.entryOverhead <= maxBytes / 4 else { return }
        state.withLock { state in
            let node = Node(tag: tag, body: body)  // made inside: it belongs to the guarded list
            if let old = state.entries.removeValue(forKey: tag) {
                state.unlink(old)
                state.stats.bytes -= old.cost
            }
            state.entries[tag] = node
            state.linkAtFront(node)
            state.stats.bytes += node.cost
            state.evictToBound(maxBytes)
        }
    }

    /// Adds the gzip form of the body kept under `tag` (if it still is, and the bound allows).
    func storeGzip(_ gzip: [UInt8], for tag: String) {
        guard keepsBodies else { return }
        state.withLock { state in
            guard let node = state.entries[tag], node.gzip == nil else { return }
            node.gzip = gzip
            state.stats.bytes += gzip.count
            state.moveToFront(node)
            state.evictToBound(maxBytes)
        }
    }

    /// Forgets every tag input and body: a class's permissions changed, so answers and tags made
    /// under the old ones must not be served (its finds skip the cache from then on).
    func removeAll() {
        state.withLock { $0.inputs.removeAll() }
        removeAllBodies()
    }

    /// Forgets every body (the tag inputs stay: they depend on no data).
    func removeAllBodies() {
        state.withLock { state in
            state.entries.removeAll()
            state.newest = nil
            state.oldest = nil
            state.stats.bytes = 0
        }
    }

    /// The counters now.
    var currentStats: Stats {
        state.withLock { state in
            var now = state.stats
            now.entries = state.entries.count
            return now
        }
    }
}
