import Foundation
import Postgres
import Testing

@testable import GalleryApp

/// A find or count with no kept bodies (`manifest_cache_bytes = 0`) goes to the handler pool,
/// which reuses the tag kept with the query string's inputs while it is current
/// (docs/decisions/057): the answer's `ETag` is the one a fresh digest gives, and it moves as soon
/// as the sequences do, for a write from this server or from another connection.
@Suite struct KeptTagWithoutBodiesTests {
    typealias Cache = ManifestCacheTests

    /// The `count` of a count answer.
    static func count(_ response: RawHTTP.Response) -> Int? {
        let object = (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any]
        return object?["count"] as? Int
    }

    @Test func count_KeepsItsTag_WhileNothingChanges_AndMovesWithTheSequences() throws {
        let (server, _) = try Cache.serverWithPhotos(2) { $0.manifestCacheBytes = 0 }
        defer { server.stop() }
        let path = "/parse/classes/Photo?count=1&limit=0"
        let first = try Cache.get(server, path)
        #expect(first.status == 200 && Self.count(first) == 2, "\(first.status) \(first.text.prefix(200))")
        let tag = try #require(first.header("ETag"))
        // Answered again by the pool with the kept tag: the same bytes and the same tag.
        let again = try Cache.get(server, path)
        #expect(again.status == 200 && again.body == first.body && again.header("ETag") == tag)
        #expect(try Cache.get(server, path, ["If-None-Match": tag]).status == 304)

        // Another connection's row: once its notification moves the stamp, the kept tag is not reused.
        let stamp = try #require(server.application.classChanges.stamp())
        let other = try PostgresConnection(url: server.application.configuration.databaseURL)
        let checksum = String(repeating: "c0", count: 32)
        try other.query(
            """
            insert into photos (object_id, filename, byte_size, checksum, width, height, aspect_ratio, original_key, status)
            values ($1, 'other.jpg', 1000, $2, 400, 300, 1.3333333333333333, $3, 'ready')
            """, [ParseObjectID.generate(), checksum, "originals/\(checksum).jpg"])
        let deadline = Date().addingTimeInterval(10)
        while server.application.classChanges.stamp() == stamp && Date() < deadline {
            Thread.sleep(forTimeInterval: 0.02)
        }
        let moved = try Cache.get(server, path)
        #expect(moved.status == 200 && Self.count(moved) == 3, "\(moved.text.prefix(200))")
        let newTag = try #require(moved.header("ETag"))
        #expect(newTag != tag)
        #expect(try Cache.get(server, path).header("ETag") == newTag)
        #expect(try Cache.get(server, path, ["If-None-Match": tag]).status == 200)
        #expect(try Cache.get(server, path, ["If-None-Match": newTag]).status == 304)
        #expect(server.application.manifestCache.currentStats.entries == 0)
    }

    @Test func find_TagFromThePool_IsTheTagOfAFreshDigest() throws {
        let (server, ids) = try Cache.serverWithPhotos(2) { $0.manifestCacheBytes = 0 }
        defer { server.stop() }
        let path = "/parse/classes/Photo?order=-createdAt&limit=5"
        let first = try Cache.get(server, path)
        let tag = try #require(first.header("ETag"))
        // The inputs and tag forgotten: the next answer makes its tag from scratch, and it is the same.
        server.application.manifestCache.removeAll()
        let fresh = try Cache.get(server, path)
        #expect(fresh.header("ETag") == tag && fresh.body == first.body)
        // A write through this server: the pool's next answer has the new title and a new tag.
        let update = try server.request(
            "PUT", "/parse/classes/Photo/\(ids[0])", body: Data(#"{"title":"renamed"}"#.utf8))
        #expect(update.status == 200)
        let after = try Cache.get(server, path)
        #expect(Cache.titles(after).contains("renamed"))
        #expect(after.header("ETag") != nil && after.header("ETag") != tag)
    }
}
