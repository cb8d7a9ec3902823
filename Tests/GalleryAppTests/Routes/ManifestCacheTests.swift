import Foundation
import Postgres
import Synchronization
import Testing

@testable import GalleryApp

/// Rendered find and count answers kept by their ETag (`ManifestCache`, issue #17): an unchanged
/// page is answered from memory, and never once anything it shows has changed — a write through
/// this server, one from another connection, another caller, another signing window, the
/// listener down. Requests go over a raw socket (no client cache in between).
@Suite struct ManifestCacheTests {
    typealias Conditional = ConditionalManifestTests

    /// A GET over a raw socket with the app id and extra header lines, and the master key unless
    /// they name a caller or the request is `anonymous` (as `TestServer.request`).
    static func get(
        _ server: TestServer, _ path: String, _ headers: [String: String] = [:], anonymous: Bool = false
    ) throws -> RawHTTP.Response {
        var head = "GET \(path) HTTP/1.1\r\nHost: localhost\r\nX-Parse-Application-Id: gallery\r\n"
        if !anonymous && !TestServer.namesCaller(headers) { head += "X-Parse-Master-Key: \(TestServer.masterKey)\r\n" }
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        return try RawHTTP.exchange(port: server.application.port, head: head + "Connection: close\r\n\r\n")
    }

    /// The titles of a find's results, in order.
    static func titles(_ response: RawHTTP.Response) -> [String] {
        let object = (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any]
        return (object?["results"] as? [[String: Any]] ?? []).map { $0["title"] as? String ?? "" }
    }

    /// A server with photos whose sequences it knows (read after the rows went in behind its back).
    static func serverWithPhotos(
        _ count: Int, configure: (inout GalleryConfiguration) -> Void = { _ in }
    ) throws -> (TestServer, [String]) {
        let server = try TestServer(workers: 0, listening: true, configure: configure)
        let ids = try server.insertPhotos(count)
        #expect(Conditional.waitUntilKnown(server))
        try server.application.classChanges.refresh()
        return (server, ids)
    }

    @Test func cache_AnswersAnUnchangedPage_WithoutTheDatabase() throws {
        let (server, _) = try Self.serverWithPhotos(3)
        defer { server.stop() }
        let path = "/parse/classes/Photo?order=-createdAt&limit=2"
        let first = try Self.get(server, path)
        #expect(first.status == 200)
        let tag = try #require(first.header("ETag"))
        let before = server.application.manifestCache.currentStats
        #expect(before.entries >= 1)
        let again = try Self.get(server, path)
        #expect(again.status == 200 && again.body == first.body && again.header("ETag") == tag)
        #expect(again.header("Cache-Control") == "private, no-cache")
        #expect(server.application.manifestCache.currentStats.hits == before.hits + 1)

        // Take the pool's sessions away (the listener's stays): a query now fails, the kept page does not.
        let admin = try PostgresConnection(url: server.adminURL)
        try admin.execute("alter database \(server.databaseName) allow_connections false")
        defer { try? admin.execute("alter database \(server.databaseName) allow_connections true") }
        _ = try admin.query(
            "select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and query not like $2 and pid <> pg_backend_pid()",
            [server.databaseName, "LISTEN%"])
        let kept = try Self.get(server, path)
        #expect(kept.status == 200 && kept.body == first.body, "\(kept.status) \(kept.text.prefix(200))")
        #expect(try Self.get(server, path, ["If-None-Match": tag]).status == 304)
        let uncached = try Self.get(server, "/parse/classes/Photo?order=-createdAt&limit=1")
        #expect(uncached.status >= 500, "a query that is not kept needs the database: \(uncached.status)")
        #expect(server.application.classChanges.isKnown, "the listener's session was left alone")
    }

    @Test func cache_KeepsEachCallersOwnAnswer() throws {
        let server = try TestServer(workers: 0, listening: true)
        defer { server.stop() }
        let alice = try server.makeUser("alice")
        let bob = try server.makeUser("bob")
        let aliceIds = Set(try server.insertPhotos(2, owner: alice.objectId))
        let bobIds = Set(try server.insertPhotos(3, owner: bob.objectId))
        #expect(Conditional.waitUntilKnown(server))
        try server.application.classChanges.refresh()
        let path = "/parse/classes/Photo?order=-createdAt&limit=10"
        func ids(_ response: RawHTTP.Response) -> Set<String> {
            let object = (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any]
            return Set((object?["results"] as? [[String: Any]] ?? []).compactMap { $0["objectId"] as? String })
        }
        // Twice each, interleaved: the second answers come from the cache and stay per caller.
        for round in 0..<2 {
            let a = try Self.get(server, path, alice.headers)
            let b = try Self.get(server, path, bob.headers)
            let anonymous = try Self.get(server, path, anonymous: true)
            let master = try Self.get(server, path, ["X-Parse-Master-Key": TestServer.masterKey])
            #expect(ids(a) == aliceIds, "round \(round)")
            #expect(ids(b) == bobIds, "round \(round)")
            #expect(anonymous.status == 200 && ids(anonymous).isEmpty, "round \(round): \(anonymous.text.prefix(200))")
            #expect(ids(master) == aliceIds.union(bobIds), "round \(round)")
            #expect(Set([a, b, anonymous, master].compactMap { $0.header("ETag") }).count == 4)
        }
        #expect(server.application.manifestCache.currentStats.hits >= 4)
        // A revoked session is not answered from memory: 209, not alice's kept page.
        let logout = try server.request("POST", "/parse/logout", body: Data("{}".utf8), headers: alice.headers)
        #expect(logout.status == 200)
        let after = try Self.get(server, path, alice.headers)
        #expect(after.status != 200 && after.text.contains("\"code\":209"), "\(after.status) \(after.text.prefix(200))")
    }

    @Test func cache_Misses_AfterAWriteFromAnotherConnection() throws {
        let (server, ids) = try Self.serverWithPhotos(2)
        defer { server.stop() }
        let path = "/parse/classes/Photo?order=-createdAt&limit=5"
        let first = try Self.get(server, path)
        #expect(!Self.titles(first).contains("from elsewhere"))
        #expect(try Self.get(server, path).body == first.body)
        // Another instance's write: only its notification tells this server.
        let other = try PostgresConnection(url: server.application.configuration.databaseURL)
        try other.query("update photos set title = 'from elsewhere' where object_id = $1", [ids[0]])
        let deadline = Date().addingTimeInterval(10)
        var latest = try Self.get(server, path)
        while !Self.titles(latest).contains("from elsewhere") && Date() < deadline {
            Thread.sleep(forTimeInterval: 0.02)
            latest = try Self.get(server, path)
        }
        #expect(Self.titles(latest).contains("from elsewhere"))
        #expect(latest.header("ETag") != nil && latest.header("ETag") != first.header("ETag"))
    }

    @Test func keptTag_Revalidates_UntilTheSequencesMove() throws {
        let (server, ids) = try Self.serverWithPhotos(2)
        defer { server.stop() }
        let path = "/parse/classes/Photo?order=-createdAt&limit=5"
        let first = try Self.get(server, path)
        let tag = try #require(first.header("ETag"))
        let stamp = try #require(server.application.classChanges.stamp())
        // The tag kept with the query string answers each revalidation, in every form of the field.
        for field in [tag, String(tag.dropFirst(2)), "\"x\", " + tag, "W/\"x\" ,\t\(tag)", "*"] {
            let revalidated = try Self.get(server, path, ["If-None-Match": field])
            #expect(revalidated.status == 304, "\(field)")
            #expect(
                revalidated.header("ETag") == tag && revalidated.header("Cache-Control") == ParseRoutes.revalidateValue)
            #expect(revalidated.body.isEmpty)
        }
        for field in [String(tag.dropLast(2)) + "\"", "W/" + tag, "\"é\", W/\"x\"", "garbage"] {
            let full = try Self.get(server, path, ["If-None-Match": field])
            #expect(full.status == 200 && full.body == first.body, "\(field)")
        }
        // Another instance's write: once its notification moves the stamp, the kept tag is made again.
        let other = try PostgresConnection(url: server.application.configuration.databaseURL)
        try other.query("update photos set title = 'moved' where object_id = $1", [ids[0]])
        let deadline = Date().addingTimeInterval(10)
        while server.application.classChanges.stamp() == stamp && Date() < deadline {
            Thread.sleep(forTimeInterval: 0.02)
        }
        #expect(server.application.classChanges.stamp() != stamp)
        let changed = try Self.get(server, path, ["If-None-Match": tag])
        #expect(changed.status == 200 && Self.titles(changed).contains("moved"))
        let newTag = try #require(changed.header("ETag"))
        #expect(newTag != tag)
        #expect(try Self.get(server, path, ["If-None-Match": newTag]).status == 304)
        #expect(try Self.get(server, path, ["If-None-Match": tag]).status == 200)
    }

    @Test func cache_IsNotUsed_WhileTheListenerIsDown() throws {
        let (server, ids) = try Self.serverWithPhotos(2)
        defer { server.stop() }
        let path = "/parse/classes/Photo?order=-createdAt&limit=5"
        let first = try Self.get(server, path)
        #expect(first.header("ETag") != nil)
        #expect(try Self.get(server, path).body == first.body)
        let other = try PostgresConnection(url: server.application.configuration.databaseURL)
        let admin = try PostgresConnection(url: server.adminURL)
        try admin.execute("alter database \(server.databaseName) allow_connections false")
        defer { try? admin.execute("alter database \(server.databaseName) allow_connections true") }
        let killed = try admin.query(
            "select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and query like $2",
            [server.databaseName, "LISTEN \"\(ClassChangeSequences.channel)\"%"])
        #expect(killed.count == 1)
        let deadline = Date().addingTimeInterval(10)
        while server.application.classChanges.isKnown && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        #expect(!server.application.classChanges.isKnown)
        // A change no notification brings: the very next page shows it (no tag, nothing kept is used).
        try other.query("update photos set title = 'while down' where object_id = $1", [ids[1]])
        let down = try Self.get(server, path)
        #expect(down.status == 200 && down.header("ETag") == nil)
        #expect(Self.titles(down).contains("while down"))
    }

    @Test func cache_FollowsTheSigningWindow() throws {
        // A 2 s window (the configuration file allows 60 s and more; the test sets it directly).
        let (server, _) = try Self.serverWithPhotos(1) {
            $0.bucketPublic = false
            $0.urlWindowSeconds = 2
        }
        defer { server.stop() }
        let path = "/parse/classes/Photo?limit=1"
        func expires(_ response: RawHTTP.Response) -> Int? {
            let object = (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any]
            let url =
                ((object?["results"] as? [[String: Any]])?.first?["original"] as? [String: Any])?["url"] as? String
            return url.flatMap { URL(string: $0) }.flatMap { SignedAssetURLTests.parts($0.path) }.map {
                Int($0.expires)
            }
        }
        // Start just after a window began, so two requests fall in the same window.
        let signer = try #require(server.application.assetSigner)
        let start = signer.expiresNow()
        while signer.expiresNow() == start { Thread.sleep(forTimeInterval: 0.01) }
        let first = try Self.get(server, path)
        let second = try Self.get(server, path)
        #expect(second.body == first.body && second.header("ETag") == first.header("ETag"))
        let firstExpiry = try #require(expires(first), "no expiry in \(first.text.prefix(300))")
        let window = signer.expiresNow()
        while signer.expiresNow() == window { Thread.sleep(forTimeInterval: 0.02) }
        let next = try Self.get(server, path)
        #expect(next.header("ETag") != first.header("ETag"), "a new window is a new tag")
        let nextExpiry = try #require(expires(next))
        #expect(nextExpiry > firstExpiry, "the kept body of the old window is not served in the new one")
        #expect(nextExpiry == Int(signer.expiresNow()))
    }

    @Test func cache_KeepsTheGzipForm_ForClientsThatTakeIt() throws {
        let (server, _) = try Self.serverWithPhotos(12)
        defer { server.stop() }
        let path = "/parse/classes/Photo?order=-createdAt&limit=12"
        let plain = try Self.get(server, path)
        #expect(plain.body.count > 1024 && plain.header("Content-Encoding") == nil)
        let zipped = try Self.get(server, path, ["Accept-Encoding": "gzip"])
        #expect(zipped.status == 200 && zipped.header("Content-Encoding") == "gzip")
        #expect(zipped.header("Vary")?.contains("Accept-Encoding") == true)
        #expect(zipped.body.count < plain.body.count)
        let again = try Self.get(server, path, ["Accept-Encoding": "gzip"])
        #expect(again.body == zipped.body && again.header("Content-Encoding") == "gzip")
        #expect(try Self.get(server, path).body == plain.body, "a client without gzip still gets the plain body")
        let stats = server.application.manifestCache.currentStats
        #expect(stats.bytes > plain.body.count + zipped.body.count, "both forms are kept and counted")
    }

    @Test func cache_KeepsNothing_WhenTurnedOff() throws {
        let (server, ids) = try Self.serverWithPhotos(2) { $0.manifestCacheBytes = 0 }
        defer { server.stop() }
        let path = "/parse/classes/Photo?order=-createdAt&limit=5"
        let first = try Self.get(server, path)
        let tag = try #require(first.header("ETag"))
        #expect(try Self.get(server, path, ["If-None-Match": tag]).status == 304, "304s do not need kept bodies")
        #expect(
            try server.request("PUT", "/parse/classes/Photo/\(ids[0])", body: Data(#"{"title":"new"}"#.utf8)).status
                == 200)
        #expect(Self.titles(try Self.get(server, path)).contains("new"))
        let stats = server.application.manifestCache.currentStats
        #expect(stats.entries == 0 && stats.bytes == 0 && stats.hits == 0)
    }

    /// Writes through the API and reads interleaved hundreds of times, with readers keeping the
    /// page hot (and revalidating) in between: a read that starts after a write's response never
    /// shows the page from before the write.
    @Test func cache_ReadAfterWrite_NeverSeesTheOldPage() throws {
        let (server, ids) = try Self.serverWithPhotos(3)
        defer { server.stop() }
        let path = "/parse/classes/Photo?order=-createdAt&limit=5"
        let stop = LockedFlag()
        let group = DispatchGroup()
        for reader in 0..<2 {
            DispatchQueue.global().async(group: group) {
                var tag: String?
                while !stop.isSet {
                    let response = try? Self.get(server, path, tag.map { ["If-None-Match": $0] } ?? [:])
                    if response?.status == 200 { tag = response?.header("ETag") }
                    usleep(UInt32.random(in: 0...(reader == 0 ? 500 : 2000)))
                }
            }
        }
        defer {
            stop.set()
            group.wait()
        }
        var stale: [String] = []
        for i in 0..<300 {
            let title = "v\(i)"
            let put = try server.request(
                "PUT", "/parse/classes/Photo/\(ids[i % ids.count])", body: Data(#"{"title":"\#(title)"}"#.utf8))
            #expect(put.status == 200)
            if Bool.random() { usleep(UInt32.random(in: 0...1500)) }
            let page = try Self.get(server, path)
            if !Self.titles(page).contains(title) { stale.append("\(title): \(Self.titles(page))") }
        }
        #expect(stale.isEmpty, "\(stale.count) stale reads, first: \(stale.first ?? "")")
        #expect(server.application.manifestCache.currentStats.hits > 0, "the readers were answered from the cache")
    }
}

/// A flag set once, read from several threads.
final class LockedFlag: Sendable {
    private let value = Atomic(false)
    var isSet: Bool { value.load(ordering: .relaxed) }
    func set() { value.store(true, ordering: .relaxed) }
}

/// `ManifestCache` on its own: the byte bound, least recently used first out, the tag inputs' bound.
@Suite struct ManifestCacheBoundTests {
    static func body(_ size: Int, _ fill: UInt8) -> [UInt8] { [UInt8](repeating: fill, count: size) }
    static let overhead = ManifestCache.entryOverhead

    @Test func cache_EvictsTheLeastRecentlyUsed_ToStayWithinItsBytes() {
        // 800-byte bodies cost 930 with their 2-byte tags: four fit in 4,000 bytes, a fifth does not.
        let cache = ManifestCache(maxBytes: 4000)
        #expect(cache.body(for: "t0") == nil)
        for i in 1...4 { cache.store(Self.body(800, UInt8(i)), for: "t\(i)") }
        #expect(cache.currentStats.entries == 4 && cache.currentStats.evictions == 0)
        #expect(cache.body(for: "t1")?.body.first == 1)  // t1 is now the most recently used
        cache.store(Self.body(800, 5), for: "t5")
        var stats = cache.currentStats
        #expect(stats.evictions == 1 && stats.bytes <= cache.maxBytes && stats.entries == 4)
        #expect(cache.body(for: "t2") == nil, "the least recently used went first")
        #expect(cache.body(for: "t1")?.body.first == 1)
        #expect(cache.body(for: "t5")?.body.first == 5)
        // A gzip form counts too, and pushes the oldest out (t3).
        cache.storeGzip(Self.body(900, 9), for: "t5")
        stats = cache.currentStats
        #expect(stats.bytes <= cache.maxBytes && stats.evictions == 2)
        #expect(cache.body(for: "t3") == nil)
        #expect(cache.body(for: "t5")?.gzip?.count == 900)
        // A body over a quarter of the bound is not kept at all.
        cache.store(Self.body(cache.maxBytes / 4 + 1, 5), for: "big")
        #expect(cache.body(for: "big") == nil)
        cache.removeAllBodies()
        #expect(cache.currentStats.bytes == 0 && cache.currentStats.entries == 0)
    }

    @Test func cache_ReplacesABodyStoredAgain_AndKeepsNothingWhenOff() {
        let cache = ManifestCache(maxBytes: 100_000)
        cache.store(Self.body(10, 1), for: "t")
        cache.store(Self.body(20, 2), for: "t")
        #expect(cache.currentStats.entries == 1)
        #expect(cache.currentStats.bytes == 20 + 1 + Self.overhead)
        #expect(cache.body(for: "t")?.body == Self.body(20, 2))
        let off = ManifestCache(maxBytes: 0)
        off.store(Self.body(10, 1), for: "t")
        #expect(off.body(for: "t") == nil && off.currentStats.entries == 0)
    }

    @Test func keptTag_IsGiven_OnlyForTheVersionItWasMadeFor() {
        let cache = ManifestCache(maxBytes: 0)
        let inputs = ManifestCache.TagInputs(className: "Photo", dependencies: ["Photo"], items: [])
        let key = ManifestCache.QueryKey(className: "Photo", query: "limit=1", access: 1, caller: "anonymous")
        let version = ManifestCache.TagVersion(stamp: 3, publicURL: "http://a.test", assetWindow: 60)
        let tag = ManifestCache.KnownTag("W/\"0123\"", cacheControl: "private, no-cache")
        // Nothing kept for a query string not remembered.
        cache.keep(tag, version: version, for: key)
        #expect(cache.lookUp(key, version: version) == nil)
        cache.remember(inputs, for: key)
        #expect(cache.lookUp(key, version: version)?.tag == nil, "remembered, no tag made yet")
        cache.keep(tag, version: version, for: key)
        #expect(cache.lookUp(key, version: version)?.tag?.value == tag.value)
        #expect(tag.opaque == Array("\"0123\"".utf8))
        #expect(tag.headers["ETag"] == tag.value && tag.headers["Cache-Control"] == "private, no-cache")
        #expect(tag.isNamed(by: "\"0123\"") && tag.isNamed(by: tag.value) && !tag.isNamed(by: "\"012\""))
        for other in [
            ManifestCache.TagVersion(stamp: 4, publicURL: "http://a.test", assetWindow: 60),
            ManifestCache.TagVersion(stamp: 3, publicURL: "http://b.test", assetWindow: 60),
            ManifestCache.TagVersion(stamp: 3, publicURL: "http://a.test", assetWindow: 120),
            ManifestCache.TagVersion(stamp: 3, publicURL: "http://a.test", assetWindow: nil),
        ] {
            let found = cache.lookUp(key, version: other)
            #expect(found != nil && found?.tag == nil, "\(other)")
        }
        // Remembering the inputs again starts without a tag.
        cache.remember(inputs, for: key)
        #expect(cache.lookUp(key, version: version)?.tag == nil)
    }

    @Test func tagInputs_AreBounded_AndLongQueriesNotKept() {
        let cache = ManifestCache(maxBytes: 0)
        let inputs = ManifestCache.TagInputs(className: "Photo", dependencies: ["Photo"], items: [])
        func key(_ query: String) -> ManifestCache.QueryKey {
            ManifestCache.QueryKey(className: "Photo", query: query, access: 1, caller: "anonymous")
        }
        for i in 0..<ManifestCache.maxQueries { cache.remember(inputs, for: key("limit=\(i)")) }
        #expect(cache.tagInputs(key("limit=0")) != nil)
        cache.remember(inputs, for: key("limit=overflow"))
        #expect(cache.tagInputs(key("limit=0")) == nil, "a full map starts over")
        #expect(cache.tagInputs(key("limit=overflow")) != nil)
        cache.remember(inputs, for: key(String(repeating: "a", count: ManifestCache.maxQueryBytes + 1)))
        #expect(cache.tagInputs(key(String(repeating: "a", count: ManifestCache.maxQueryBytes + 1))) == nil)
        // The caller is part of the key.
        #expect(
            cache.tagInputs(
                ManifestCache.QueryKey(className: "Photo", query: "limit=overflow", access: 1, caller: "user:x")) == nil
        )
    }
}
