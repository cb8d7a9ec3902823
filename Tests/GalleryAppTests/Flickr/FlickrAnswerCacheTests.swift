import Foundation
import Testing

@testable import GalleryApp

/// Kept Flickr answers (`FlickrAnswerCache`): a repeated call is answered from memory, a write
/// (upload, trash, ACL change) makes the next call fresh, callers and formats never share an
/// answer, and the key ignores what does not change an answer.
@Suite(.serialized) final class FlickrAnswerCacheTests {
    let server: TestServer
    let owner: TestUser
    let gallery: String
    let first: String

    init() throws {
        // Listening: the gzip test reads the kept answer's encoding off a raw socket.
        server = try TestServer(workers: 1, listening: true) { $0.publicRead = true }
        owner = try server.makeUser("kim")
        first = try server.uploadPhoto(
            TestJPEG.make(width: 640, height: 480, seed: 41), title: "Kept one", tags: ["kept"])
        #expect(try server.waitForProcessing(first) == "ready")
        try server.application.pool.query("update photos set owner_id = $1", [owner.objectId])
        let created = try server.json(
            "POST", "/parse/classes/Gallery",
            [
                "name": "Kept", "ACL": ["*": ["read": true]],
                "owner": ["__type": "Pointer", "className": "_User", "objectId": owner.objectId],
            ])
        gallery = try #require(created.json["objectId"] as? String, "\(created.text)")
        _ = try server.addedItem(gallery: gallery, photo: first)
    }

    deinit { server.stop() }

    /// The raw answer of a search for `tags=kept`.
    func search(_ extra: String = "", headers: [String: String] = [:]) throws -> TestServer.Response {
        let response = try server.request(
            "GET",
            "/services/rest/?method=flickr.photos.search&api_key=\(TestServer.appID)&tags=kept&extras=url_s,url_m"
                + "&format=json&nojsoncallback=1" + extra,
            headers: headers, appID: nil)
        #expect(response.status == 200, "\(response.text)")
        return response
    }

    func ids(_ response: TestServer.Response) -> Set<String> {
        let list = ((response.json["photos"] as? [String: Any])?["photo"] as? [[String: Any]]) ?? []
        return Set(list.compactMap { $0["id"] as? String })
    }

    var hits: Int { server.application.manifestCache.currentStats.hits }

    @Test func repeatedCall_IsKept_AndEachWriteMakesTheNextOneFresh() throws {
        let before = try search()
        #expect(ids(before) == [first])
        let hitsBefore = hits
        let again = try search()
        #expect(again.body == before.body && hits == hitsBefore + 1, "the second call is the kept answer")
        // Upload: a new photo in the public gallery.
        let second = try server.uploadPhoto(
            TestJPEG.make(width: 480, height: 640, seed: 42), title: "Kept two", tags: ["kept"])
        #expect(try server.waitForProcessing(second) == "ready")
        _ = try server.addedItem(gallery: gallery, photo: second)
        #expect(ids(try search()) == [first, second])
        // Trash.
        #expect(try server.request("DELETE", "/parse/classes/Photo/\(second)").status == 200)
        #expect(ids(try search()) == [first])
        // ACL: the gallery is no longer public.
        let acl = try server.json("PUT", "/parse/classes/Gallery/\(gallery)", ["ACL": [:] as [String: Any]])
        #expect(acl.status == 200, "\(acl.text)")
        #expect(ids(try search()).isEmpty)
        // A title change (the photo's own row) shows too.
        let restored = try server.json("PUT", "/parse/classes/Gallery/\(gallery)", ["ACL": ["*": ["read": true]]])
        #expect(restored.status == 200, "\(restored.text)")
        #expect(ids(try search()) == [first])
        _ = try server.json("PUT", "/parse/classes/Photo/\(first)", ["title": "Renamed"])
        let photo = ((try search().json["photos"] as? [String: Any])?["photo"] as? [[String: Any]])?.first
        #expect(photo?["title"] as? String == "Renamed")
    }

    @Test func callersAndFormats_NeverShareAnAnswer() throws {
        let mine = try server.uploadPhoto(
            TestJPEG.make(width: 320, height: 240, seed: 43), title: "Mine", tags: ["kept"])
        #expect(try server.waitForProcessing(mine) == "ready")
        try server.application.pool.query(
            "update photos set owner_id = $1 where object_id = $2", [owner.objectId, mine])
        // Twice each, so the second of each is a kept answer when keys collide.
        for _ in 0..<2 {
            #expect(ids(try search()) == [first], "anonymous: the public photo only")
            #expect(ids(try search(headers: owner.headers)) == [first, mine], "the owner: theirs too")
        }
        let xml = try server.request(
            "GET", "/services/rest/?method=flickr.photos.search&api_key=\(TestServer.appID)&tags=kept&format=rest",
            appID: nil)
        #expect(xml.text.hasPrefix("<?xml") && xml.header("Content-Type")?.hasPrefix("text/xml") == true)
        let wrapped = try server.request(
            "GET",
            "/services/rest/?method=flickr.photos.search&api_key=\(TestServer.appID)&tags=kept&format=json&jsoncallback=cb",
            appID: nil)
        #expect(wrapped.text.hasPrefix("cb({") && wrapped.header("Content-Type")?.hasPrefix("text/javascript") == true)
        // A bad key is its error, kept answer or not.
        let badKey = try server.request(
            "GET", "/services/rest/?method=flickr.photos.search&api_key=wrong&tags=kept&format=json&nojsoncallback=1",
            appID: nil)
        #expect(badKey.json["code"] as? Int == 100)
        // A photo made public shows at the next call (the "not found" before was not kept either).
        let info = "/services/rest/?method=flickr.photos.getInfo&api_key=\(TestServer.appID)&photo_id=\(mine)"
        #expect(try server.request("GET", info + "&format=json&nojsoncallback=1", appID: nil).json["code"] as? Int == 1)
        _ = try server.addedItem(gallery: gallery, photo: mine)
        #expect(
            try server.request("GET", info + "&format=json&nojsoncallback=1", appID: nil).json["stat"] as? String
                == "ok")
    }

    @Test func gzipClients_GetTheKeptAnswerCompressed() throws {
        let extras = "url_sq,url_q,url_t,url_s,url_n,url_w,url_m,url_z,url_c,url_b,url_h,url_k,url_o,tags,o_dims"
        let path =
            "/services/rest/?method=flickr.photos.search&api_key=\(TestServer.appID)&tags=kept&extras=\(extras)"
            + "&format=json&nojsoncallback=1"
        let plain = try server.request("GET", path, appID: nil)
        #expect(plain.body.count > 1024, "large enough to be compressed")
        let hitsBefore = hits
        // Kept without its gzip form: made on the pool, then kept and answered on the loop.
        for _ in 0..<3 {
            let zipped = try RawHTTPClient.exchange(
                port: server.application.port,
                head: "GET \(path) HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\nConnection: close\r\n\r\n")
            #expect(zipped.status == 200 && zipped.header("Content-Encoding") == "gzip")
            #expect(zipped.body.count < plain.body.count)
        }
        #expect(hits >= hitsBefore + 3)
    }

    @Test func key_IgnoresKeyOrderNonceAndFormatArguments_ButNotTheRest() throws {
        let base = FlickrParameters([
            ("method", "flickr.photos.search"), ("tags", "a"), ("api_key", "k"), ("oauth_nonce", "1"), ("tags", "b"),
        ])
        let same = FlickrParameters([
            ("oauth_nonce", "2"), ("tags", "a"), ("method", "flickr.photos.search"), ("api_sig", "x"),
        ])
        #expect(FlickrAnswerCache.normalized(base) == FlickrAnswerCache.normalized(same))
        #expect(FlickrAnswerCache.normalized(base) == "4:tagsa\n6:methodflickr.photos.search")
        // Names and values cannot pass for one another.
        #expect(
            FlickrAnswerCache.normalized(FlickrParameters([("ab", "c")]))
                != FlickrAnswerCache.normalized(FlickrParameters([("a", "bc")])))
        let long = FlickrParameters([("text", String(repeating: "x", count: FlickrAnswerCache.maxArgumentBytes))])
        #expect(FlickrAnswerCache.normalized(long) == nil, "too long to keep")
        let cache = FlickrAnswerCache(
            bodies: server.application.manifestCache, classChanges: server.application.classChanges,
            publicURL: { "http://x" })
        let key = try #require(cache.key(base, format: .rest, caller: .anonymous))
        #expect(cache.key(same, format: .rest, caller: .anonymous) == key)
        #expect(cache.key(base, format: .json(callback: nil), caller: .anonymous) != key)
        #expect(cache.key(base, format: .rest, caller: .user(objectId: "u1")) != key)
        #expect(cache.key(FlickrParameters([("method", "flickr.test.echo")]), format: .rest, caller: .anonymous) == nil)
    }
}
