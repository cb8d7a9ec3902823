import Foundation
import GalleryTestSupport
import Imaging
import Postgres
import Testing

@testable import GalleryApp

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Display sizes over HTTP: rendered on first request, then served as the bucket serves a
/// thumbnail; one render however many cold requests; bounded; gone with re-processing and purge.
@Suite(.serialized) final class SizeRouteTests {
    let server: TestServer
    let photo: ReadyPhoto

    init() throws {
        server = try TestServer(workers: 1, listening: true) { $0.sizeCacheBytes = 1 << 30 }
        photo = try ReadyPhoto(on: server, width: 1200, height: 900, seed: 77)
    }

    deinit { server.stop() }

    func rows() throws -> Int {
        let rows = try server.application.pool.query(
            "select count(*)::bigint as n from photo_sizes where photo_id = $1", [photo.id])
        return Int(try rows[0].decode(Int64.self, "n"))
    }

    @Test func firstRequest_RendersTheSize_ThenItIsServedLikeAThumbnail() throws {
        let path = try photo.path(.s)
        #expect(path == "/bucket/sizes/\(photo.id)/s.jpg")
        let first = try photo.get(path)
        #expect(first.status == 200)
        #expect(first.header("Content-Type") == "image/jpeg")
        let info = try ImageProbe.probe(bytes: [UInt8](first.body))
        #expect(info.width == 240 && info.height == 180)
        #expect(photo.sizes.metrics.renders.value("s") == 1)
        let etag = try #require(first.header("ETag"))
        // Warm: the same file, no new render; validators, ranges and 304 as the bucket's.
        let again = try photo.get(path)
        #expect(again.body == first.body && again.header("ETag") == etag)
        #expect(try photo.get(path, headers: ["If-None-Match": etag]).status == 304)
        let range = try photo.get(path, headers: ["Range": "bytes=0-9"])
        #expect(range.status == 206 && [UInt8](range.body) == Array([UInt8](first.body)[0..<10]))
        #expect(photo.sizes.metrics.renders.value("s") == 1)
        #expect(try rows() == 1)
    }

    @Test func squaresAndLargeSizes_HaveTheirDimensions_AndKIsThePreview() throws {
        let square = try photo.fetch(.sq)
        let info = try ImageProbe.probe(bytes: [UInt8](square.body))
        #expect(info.width == 75 && info.height == 75)
        // 1200×900 is smaller than 2048: `k` (and `h`) is the preview itself, nothing rendered.
        let k = try #require(photo.sizes.rendition(photo: photo.record(), size: .k))
        #expect(k.key == "previews/\(photo.id).jpg" && k.width == 1200 && k.height == 900)
        #expect(try photo.fetch(.h).status == 200)
        #expect(photo.sizes.metrics.renders.value("h") == 0)
        let original = try #require(photo.sizes.rendition(photo: photo.record(), size: .o))
        #expect(original.key.hasPrefix("originals/"))
    }

    @Test func concurrentColdRequests_MakeExactlyOneRender() throws {
        let path = try photo.path(.z)
        let url = URL(string: server.baseURL + path)!
        let statuses = Locked<[Int]>([])
        let bodies = Locked<Set<Data>>([])
        DispatchQueue.concurrentPerform(iterations: 200) { _ in
            let response = try? TestServer.send(URLRequest(url: url))
            statuses.withValue { $0.append(response?.status ?? -1) }
            if let body = response?.body { bodies.withValue { _ = $0.insert(body) } }
        }
        #expect(statuses.current == Array(repeating: 200, count: 200))
        #expect(bodies.current.count == 1)
        #expect(photo.sizes.metrics.renders.value("z") == 1)
    }

    @Test func unknownSize_Is400_AndAMissingPhoto404_InS3XML() throws {
        let unknown = try photo.get("/bucket/sizes/\(photo.id)/xl.jpg")
        #expect(unknown.status == 400)
        #expect(unknown.text.contains("<Code>InvalidRequest</Code>") && unknown.text.contains("Unknown display size"))
        #expect(try photo.get("/bucket/sizes/\(photo.id)/o.jpg").status == 400)
        #expect(try photo.get("/bucket/sizes/\(photo.id)/s.png").status == 400)
        let missing = try photo.get("/bucket/sizes/NoSuchPhoto1/s.jpg")
        #expect(missing.status == 404 && missing.text.contains("NoSuchKey"))
    }

    @Test func reprocessing_RemovesThePhotosSizes() throws {
        #expect(try photo.fetch(.t).status == 200)
        let file = server.storage + "/sizes/\(photo.id)/t.jpg"
        #expect(FileManager.default.fileExists(atPath: file))
        try server.application.pool.transaction { try JobQueue.requeue([photo.id], on: $0) }
        let deadline = Date().addingTimeInterval(30)
        // The rows go in the transaction; the file goes after its commit.
        while try rows() > 0 || FileManager.default.fileExists(atPath: file), Date() < deadline {
            Thread.sleep(forTimeInterval: 0.05)
        }
        #expect(try rows() == 0)
        #expect(!FileManager.default.fileExists(atPath: file))
        // Asked again, it is rendered again.
        #expect(try photo.fetch(.t).status == 200)
        #expect(photo.sizes.metrics.renders.value("t") == 2)
    }

    @Test func purge_RemovesThePhotosSizes() throws {
        #expect(try photo.fetch(.n).status == 200)
        let file = server.storage + "/sizes/\(photo.id)/n.jpg"
        #expect(FileManager.default.fileExists(atPath: file))
        #expect(try server.request("DELETE", "/parse/classes/Photo/\(photo.id)").status == 200)
        #expect(try server.application.trash.deletePhotos([photo.id]) == [photo.id])
        #expect(!FileManager.default.fileExists(atPath: file))
        #expect(try rows() == 0)
    }

    @Test func manifest_AddsSizesOnlyWhenKeysNamesThem_AndTheirURLsServe() throws {
        let plain = try server.request("GET", "/parse/classes/Photo/\(photo.id)")
        #expect(plain.json["sizes"] == nil, "the default record is unchanged")
        let found = try server.request("GET", "/parse/classes/Photo?keys=sizes,thumbhash&limit=1")
        let record = try #require((found.json["results"] as? [[String: Any]])?.first)
        let sizes = try #require(record["sizes"] as? [String: [String: Any]])
        #expect(Set(sizes.keys) == Set(DisplaySize.rendered.map(\.rawValue)))
        #expect(sizes["s"]?["width"] as? Int == 240 && sizes["s"]?["height"] as? Int == 180)
        #expect(sizes["sq"]?["width"] as? Int == 75)
        #expect(sizes["k"]?["width"] as? Int == 1200, "never enlarged: the preview")
        #expect(record["thumbhash"] is String && record["title"] == nil)
        let text = try #require(sizes["n"]?["url"] as? String)
        let url = try #require(URL(string: text))
        let image = try photo.get(url.path)
        #expect(image.status == 200)
        let info = try ImageProbe.probe(bytes: [UInt8](image.body))
        #expect(info.width == 320 && info.height == 240)
        // Not a field to query or sort by.
        #expect(try server.request("GET", "/parse/classes/Photo?order=sizes").status == 400)
    }

    @Test func record_CarriesTheThumbHash() throws {
        let record = try server.request("GET", "/parse/classes/Photo/\(photo.id)")
        let text = try #require(record.json["thumbhash"] as? String)
        let hash = try #require(Data(base64Encoded: text))
        #expect(hash.count >= 20 && hash.count <= 25)
        let ratio = try #require(ThumbHash.aspectRatio([UInt8](hash)))
        #expect(ratio > 1)
    }
}

/// The bound: least recently used out first, never the newest; and a signed bucket's sizes.
@Suite(.serialized) final class SizeCacheTests {
    /// A photo on a server whose size cache holds 7600 bytes: sq, t and n of this 800×600 photo
    /// take about 0.8, 1.2 and 6.0 kB (with the scans chosen per image, decision 061), so the
    /// bound holds two of them. Stopping the server is the caller's.
    private func photoInABoundedCache() throws -> ReadyPhoto {
        let server = try TestServer(workers: 1) { $0.sizeCacheBytes = 7600 }
        do {
            return try ReadyPhoto(on: server, width: 800, height: 600, seed: 78)
        } catch {
            server.stop()
            throw error
        }
    }

    /// Asks for `size` of `photo`, expecting it served.
    private func fetch(_ photo: ReadyPhoto, _ size: DisplaySize) throws {
        #expect(try photo.fetch(size).status == 200)
    }

    /// The sizes of `photo` the cache holds, by name.
    private func kept(_ photo: ReadyPhoto) throws -> [String] {
        try photo.server.application.pool.query(
            "select size from photo_sizes where photo_id = $1 order by size", [photo.id]
        )
        .map { try $0.decode(String.self, "size") }
    }

    @Test func cache_EvictsTheLeastRecentlyUsed_AndCountsIt() throws {
        let photo = try photoInABoundedCache()
        defer { photo.server.stop() }
        try fetch(photo, .sq)
        try fetch(photo, .t)
        try fetch(photo, .sq)  // sq is now more recently used than t
        try fetch(photo, .n)  // over the bound: t goes first
        let kept = try self.kept(photo)
        #expect(!kept.contains("t"), "kept: \(kept)")
        #expect(kept.contains("n"))
        #expect(!FileManager.default.fileExists(atPath: photo.server.storage + "/sizes/\(photo.id)/t.jpg"))
        #expect(photo.sizes.metrics.evictions.value() >= 1)
        #expect(photo.sizes.metrics.cacheBytes.value() <= 7600)
    }

    @Test func cache_NotesAWarmSizeAgainInEveryEvictionRound_FromTheSameOpenFile() throws {
        // A warm size is noted once per eviction round by a mark on its open file (kept by the
        // open-file cache across rounds): the second round must note it again, or it would look
        // unused and go before a size rendered earlier.
        let photo = try photoInABoundedCache()
        defer { photo.server.stop() }
        try fetch(photo, .sq)
        try fetch(photo, .n)
        try fetch(photo, .sq)  // warm: noted in this round
        try fetch(photo, .t)  // over the bound: n goes first
        #expect(try kept(photo) == ["sq", "t"])
        try fetch(photo, .sq)  // warm again, from the same open file: noted in the new round too
        try fetch(photo, .n)  // over the bound: t is now the least recently used
        #expect(try kept(photo) == ["n", "sq"])
    }

    @Test func signedBucket_ServesTheSignedURL_AndRefusesABadSignatureAsTheBucketDoes() throws {
        let server = try TestServer(workers: 1) { $0.bucketPublic = false }
        defer { server.stop() }
        let photo = try ReadyPhoto(on: server, width: 640, height: 480, seed: 79)
        let id = photo.id
        let path = try photo.path(.s)
        #expect(path.hasPrefix("/bucket/s/") && path.hasSuffix("/sizes/\(id)/s.jpg"))
        let signed = try server.request("GET", path, appID: nil)
        #expect(signed.status == 200)
        #expect(signed.header("Cache-Control")?.hasPrefix("private") == true)
        // One character of the signature changed.
        var parts = path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        parts[4] = (parts[4].first == "A" ? "B" : "A") + parts[4].dropFirst()
        let forged = try server.request("GET", parts.joined(separator: "/"), appID: nil)
        #expect(forged.status == 403 && forged.text.contains("AccessDenied"))
        let unsigned = try server.request("GET", "/bucket/sizes/\(id)/s.jpg", appID: nil)
        #expect(unsigned.status == 403)
        #expect(photo.sizes.metrics.renders.value("s") == 1)
    }
}
