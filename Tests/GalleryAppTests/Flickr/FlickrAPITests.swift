import Foundation
import Imaging
import Testing

@testable import GalleryApp

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The Flickr REST API over HTTP: PhotoViewer's exact request and its suffix replacement, the
/// other methods, who sees what, and bad input answered with Flickr's errors or a clear 4xx.
@Suite(.serialized) final class FlickrAPITests {
    let server: TestServer
    /// Photos in a gallery readable by `*` (public): a landscape and a portrait "sunset".
    let landscape: String, portrait: String
    /// A photo of `owner`'s in no gallery: theirs alone.
    let privatePhoto: String
    let owner: TestUser
    let gallery: String

    init() throws {
        server = try TestServer(workers: 1, listening: true) { $0.publicRead = true }
        owner = try server.makeUser("ann")
        landscape = try server.uploadPhoto(
            TestJPEG.make(width: 1200, height: 900, seed: 31), title: "Sunset at the beach", tags: ["sea", "red"])
        portrait = try server.uploadPhoto(
            TestJPEG.make(width: 600, height: 800, seed: 32), title: "Sunset over hills", tags: ["red"])
        privatePhoto = try server.uploadPhoto(
            TestJPEG.make(width: 640, height: 480, seed: 33), title: "My private sunset")
        for id in [landscape, portrait, privatePhoto] { #expect(try server.waitForProcessing(id) == "ready") }
        try server.application.pool.query("update photos set owner_id = $1", [owner.objectId])
        let created = try server.json(
            "POST", "/parse/classes/Gallery",
            [
                "name": "Evenings", "ACL": ["*": ["read": true]],
                "owner": ["__type": "Pointer", "className": "_User", "objectId": owner.objectId],
            ])
        gallery = try #require(created.json["objectId"] as? String, "\(created.text)")
        _ = try server.addedItem(gallery: gallery, photo: landscape)
        _ = try server.addedItem(gallery: gallery, photo: portrait)
    }

    deinit { server.stop() }

    func get(_ query: String, headers: [String: String] = [:]) throws -> TestServer.Response {
        try server.request("GET", "/services/rest/?" + query, headers: headers, appID: nil)
    }

    /// A JSON call (`nojsoncallback=1`) with the app id as `api_key`.
    func call(_ method: String, _ arguments: String = "", headers: [String: String] = [:]) throws -> [String: Any] {
        let response = try get(
            "method=\(method)&api_key=\(TestServer.appID)&format=json&nojsoncallback=1&" + arguments, headers: headers)
        #expect(response.status == 200, "\(response.text)")
        return response.json
    }

    func photos(_ answer: [String: Any]) -> [[String: Any]] {
        (answer["photos"] as? [String: Any])?["photo"] as? [[String: Any]] ?? []
    }

    /// `"<status> <width>x<height>"` of a GET of `url` on the test server.
    func fetchImage(_ url: String) throws -> String {
        let path = try #require(URL(string: url)).path
        let response = try server.request("GET", path, appID: nil)
        guard response.status == 200 else { return "\(response.status)" }
        #expect(response.header("Content-Type") == "image/jpeg")
        let info = try ImageProbe.probe(bytes: [UInt8](response.body))
        return "200 \(info.width)x\(info.height)"
    }

    @Test func photoViewer_SearchAndSuffixReplacement_GetTheRightSizes() throws {
        // PhotoViewer's request, byte for byte but for the host and key.
        let response = try get(
            "method=flickr.photos.search&api_key=\(TestServer.appID)&text=sunset&extras=url_s&format=json&nojsoncallback=1&per_page=25&page=1"
        )
        #expect(response.status == 200 && response.header("Content-Type")?.hasPrefix("application/json") == true)
        let answer = response.json
        #expect(answer["stat"] as? String == "ok")
        let page = try #require(answer["photos"] as? [String: Any])
        #expect(
            page["page"] as? Int == 1 && page["pages"] as? Int == 1 && page["perpage"] as? Int == 25
                && page["total"] as? Int == 2)
        let list = photos(answer)
        #expect(
            Set(list.compactMap { $0["id"] as? String }) == [landscape, portrait], "the private photo is not public")
        let photo = try #require(list.first { $0["id"] as? String == landscape })
        #expect(photo["secret"] is String && photo["server"] is String && photo["farm"] as? Int == 1)
        #expect(photo["title"] as? String == "Sunset at the beach" && photo["ispublic"] as? Int == 1)
        #expect(photo["width_s"] as? Int == 240 && photo["height_s"] as? Int == 180)
        let small = try #require(photo["url_s"] as? String)
        #expect(small.hasSuffix("/flickr-assets/1/\(landscape)_\(photo["secret"] as! String)_m.jpg"))
        #expect(try fetchImage(small) == "200 240x180")
        // PhotoViewer's thumbnailSizeURLString() and largeSizeURLString().
        #expect(try fetchImage(small.replacingOccurrences(of: "_m", with: "_t")) == "200 100x75")
        #expect(try fetchImage(small.replacingOccurrences(of: "_m", with: "_h")) == "200 1200x900")
        let portraitURL = try #require(list.first { $0["id"] as? String == portrait }?["url_s"] as? String)
        #expect(try fetchImage(portraitURL.replacingOccurrences(of: "_m", with: "_t")) == "200 75x100")
    }

    @Test func assets_RefuseABadSecret_AnUnknownSuffix_AndTheDisplaySecretForTheOriginal() throws {
        let info = try call("flickr.photos.getInfo", "photo_id=\(landscape)")
        let photo = try #require(info["photo"] as? [String: Any])
        let secret = try #require(photo["secret"] as? String)
        let original = try #require(photo["originalsecret"] as? String)
        let base = "/flickr-assets/1/\(landscape)_"
        #expect(try server.request("GET", base + secret + "_z.jpg", appID: nil).status == 200)
        let forged = try server.request("GET", base + String(secret.reversed()) + "_z.jpg", appID: nil)
        #expect(forged.status == 403 && forged.text.contains("secret"))
        let unknown = try server.request("GET", base + secret + "_x.jpg", appID: nil)
        #expect(unknown.status == 400 && unknown.text.contains("Unknown size suffix"))
        #expect(try server.request("GET", base + secret + "_o.jpg", appID: nil).status == 403)
        let full = try server.request("GET", base + original + "_o.jpg", appID: nil)
        #expect(full.status == 200 && full.header("ETag") != nil)
        #expect(try ImageProbe.probe(bytes: [UInt8](full.body)).width == 1200)
        let etag = try #require(full.header("ETag"))
        #expect(
            try server.request("GET", base + original + "_o.jpg", headers: ["If-None-Match": etag], appID: nil).status
                == 304)
        let range = try server.request("GET", base + original + "_o.jpg", headers: ["Range": "bytes=0-9"], appID: nil)
        #expect(range.status == 206 && range.body.count == 10)
        // A valid secret for a photo that does not exist.
        let secrets = FlickrSecrets(key: TestServer.urlSigningKey)
        let missing = try server.request(
            "GET", "/flickr-assets/1/NoSuchPhoto_\(secrets.secret(photoId: "NoSuchPhoto"))_t.jpg", appID: nil)
        #expect(missing.status == 404)
    }

    @Test func session_SeesItsOwnPhotos_AndABadTokenIs98() throws {
        let mine = try call("flickr.photos.search", "text=sunset&user_id=me", headers: owner.headers)
        #expect((mine["photos"] as? [String: Any])?["total"] as? Int == 3)
        let privateOne = try #require(photos(mine).first { $0["id"] as? String == privatePhoto })
        #expect(privateOne["ispublic"] as? Int == 0)
        let bad = try call("flickr.photos.search", "text=sunset", headers: ["X-Parse-Session-Token": "r:nope"])
        #expect(bad["stat"] as? String == "fail" && bad["code"] as? Int == 98)
        let hidden = try call("flickr.photos.getInfo", "photo_id=\(privatePhoto)")
        #expect(hidden["code"] as? Int == 1)
        #expect(
            try call("flickr.photos.getInfo", "photo_id=\(privatePhoto)", headers: owner.headers)["stat"] as? String
                == "ok")
    }

    @Test func search_FiltersSortsAndPagesAsFlickr() throws {
        func ids(_ arguments: String) throws -> [String] {
            photos(try call("flickr.photos.search", arguments)).compactMap { $0["id"] as? String }
        }
        #expect(try ids("tags=sea") == [landscape])
        #expect(Set(try ids("tags=sea,red")) == [landscape, portrait])
        #expect(try ids("tags=sea,red&tag_mode=all") == [landscape])
        #expect(try ids("text=sunset&sort=date-posted-asc") == [landscape, portrait])
        #expect(try ids("text=sunset&sort=date-posted-desc") == [portrait, landscape])
        #expect(try ids("user_id=\(owner.objectId)&max_upload_date=86400").isEmpty)
        #expect(try ids("text=sunset&min_upload_date=1970-01-02").count == 2)
        #expect(try ids("text=hills&sort=relevance") == [portrait])
        // A page past the last: empty, with the totals (Flickr's answer).
        let beyond = try call("flickr.photos.search", "text=sunset&per_page=1&page=9")
        let page = try #require(beyond["photos"] as? [String: Any])
        #expect(
            page["page"] as? Int == 9 && page["pages"] as? Int == 2 && page["total"] as? Int == 2
                && photos(beyond).isEmpty)
        #expect(
            (try call("flickr.photos.search", "text=sunset&per_page=0")["photos"] as? [String: Any])?["perpage"] as? Int
                == 100)
        #expect(
            (try call("flickr.photos.search", "text=sunset&per_page=10000")["photos"] as? [String: Any])?["perpage"]
                as? Int == 500)
        // Unknown extras are ignored; known ones are added.
        let extras = try #require(
            photos(
                try call(
                    "flickr.photos.search",
                    "tags=sea&extras=nonsense,url_sq,url_o,date_upload,date_taken,owner_name,tags,o_dims,last_update,description"
                )
            ).first)
        #expect(
            extras["nonsense"] == nil && extras["width_sq"] as? Int == 75 && extras["ownername"] as? String == "ann")
        #expect(
            extras["tags"] as? String == "sea red" && extras["o_width"] as? Int == 1200
                && extras["dateupload"] is String)
        #expect((extras["url_o"] as? String)?.hasSuffix("_o.jpg") == true && extras["datetaken"] is String)
        let parameterless = try call("flickr.photos.search")
        #expect(parameterless["code"] as? Int == 3)
    }

    @Test func otherMethods_AnswerInFlickrsShapes() throws {
        let sizes = try call("flickr.photos.getSizes", "photo_id=\(portrait)")
        let list = try #require((sizes["sizes"] as? [String: Any])?["size"] as? [[String: Any]])
        #expect(
            list.map { $0["label"] as? String ?? "" } == [
                "Square", "Large Square", "Thumbnail", "Small", "Small 320", "Small 400", "Medium", "Medium 640",
                "Medium 800",
                "Large", "Large 1600", "Large 2048", "Original",
            ])
        let medium = try #require(list.first { $0["label"] as? String == "Medium" })
        #expect(
            medium["width"] as? Int == 375 && medium["height"] as? Int == 500 && medium["media"] as? String == "photo")
        #expect(try fetchImage(try #require(medium["source"] as? String)) == "200 375x500")
        let recent = photos(try call("flickr.photos.getRecent", "per_page=1"))
        #expect(recent.count == 1 && recent[0]["id"] as? String == portrait)
        let people = try call("flickr.people.getPublicPhotos", "user_id=\(owner.objectId)", headers: owner.headers)
        #expect((people["photos"] as? [String: Any])?["total"] as? Int == 2, "public ones only, whoever asks")
        #expect(try call("flickr.people.getPublicPhotos", "user_id=nobody")["code"] as? Int == 1)
        let sets = try call("flickr.photosets.getList", "user_id=\(owner.objectId)")
        let set = try #require(((sets["photosets"] as? [String: Any])?["photoset"] as? [[String: Any]])?.first)
        #expect(set["id"] as? String == gallery && set["photos"] as? Int == 2)
        #expect((set["title"] as? [String: Any])?["_content"] as? String == "Evenings")
        let inSet = try call("flickr.photosets.getPhotos", "photoset_id=\(gallery)&extras=url_t")
        let setPhotos = try #require((inSet["photoset"] as? [String: Any])?["photo"] as? [[String: Any]])
        #expect(
            setPhotos.compactMap { $0["id"] as? String } == [landscape, portrait] && setPhotos[0]["url_t"] is String)
        #expect(try call("flickr.photosets.getPhotos", "photoset_id=NoSuchSet")["code"] as? Int == 1)
        let echo = try call("flickr.test.echo", "foo=bar")
        #expect((echo["foo"] as? [String: Any])?["_content"] as? String == "bar")
        #expect((echo["method"] as? [String: Any])?["_content"] as? String == "flickr.test.echo")
        let info = try #require(try call("flickr.photos.getInfo", "photo_id=\(landscape)")["photo"] as? [String: Any])
        #expect((info["title"] as? [String: Any])?["_content"] as? String == "Sunset at the beach")
        #expect(((info["tags"] as? [String: Any])?["tag"] as? [[String: Any]])?.count == 2)
        #expect(try call("flickr.photos.getInfo", "photo_id=\(landscape)&secret=0000000000")["code"] as? Int == 2)
    }

    @Test func badInput_GetsFlickrsErrors_InTheAskedFormat_NeverA500() throws {
        let unknown = try call("flickr.photos.frobnicate")
        #expect(unknown["stat"] as? String == "fail" && unknown["code"] as? Int == 112)
        let badKey = try get("method=flickr.test.echo&api_key=wrong&format=json&nojsoncallback=1")
        #expect(badKey.status == 200 && badKey.json["code"] as? Int == 100)
        let noKey = try get("method=flickr.test.echo")
        #expect(noKey.header("Content-Type")?.hasPrefix("text/xml") == true && noKey.text.contains("<err code=\"100\""))
        let xml = try get(
            "method=flickr.photos.getInfo&api_key=\(TestServer.appID)&photo_id=\(privatePhoto)&format=rest")
        #expect(
            xml.text.contains("<rsp stat=\"fail\">") && xml.text.contains("<err code=\"1\" msg=\"Photo not found\" />"))
        let wrapped = try get("method=flickr.test.echo&api_key=\(TestServer.appID)&format=json")
        #expect(
            wrapped.text.hasPrefix("jsonFlickrApi({")
                && wrapped.header("Content-Type")?.hasPrefix("text/javascript") == true)
        let named = try get("method=flickr.test.echo&api_key=\(TestServer.appID)&format=json&jsoncallback=cb")
        #expect(named.text.hasPrefix("cb({"))
        let hostile = try get("method=flickr.test.echo&api_key=\(TestServer.appID)&format=json&jsoncallback=alert(1)")
        #expect(hostile.status == 400 && !hostile.text.contains("alert"))
        let format = try get("method=flickr.test.echo&api_key=\(TestServer.appID)&format=xmlrpc")
        #expect(format.text.contains("<err code=\"111\""))
        // Arguments that are not percent-encoding (in a form body: URLSession re-encodes a query's `%`).
        var broken = URLRequest(url: URL(string: server.baseURL + "/services/rest/")!)
        broken.httpMethod = "POST"
        broken.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        broken.httpBody = Data("method=flickr.test.echo&api_key=%ZZ".utf8)
        let undecodable = try TestServer.send(broken)
        #expect(undecodable.status == 400 && undecodable.text.contains("<err code=\"2\""), "\(undecodable.text)")
        for arguments in ["photo_id=../../etc", "photo_id=" + String(repeating: "a", count: 5000)] {
            #expect(try call("flickr.photos.getSizes", arguments)["code"] as? Int == 1)
        }
        // A form POST, as flickrapi sends, with OAuth's consumer key in place of api_key.
        var request = URLRequest(url: URL(string: server.baseURL + "/services/rest/")!)
        request.httpMethod = "POST"
        request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data(
            "method=flickr.photos.search&oauth_consumer_key=\(TestServer.appID)&text=beach&format=json&nojsoncallback=1"
                .utf8)
        let posted = try TestServer.send(request)
        #expect(
            posted.status == 200 && (posted.json["photos"] as? [String: Any])?["total"] as? Int == 1, "\(posted.text)")
    }

    @Test func flickrapi_FromPyPI_SearchesAndReadsSizes_InJSONAndXML() throws {
        let python = try #require(
            ProcessInfo.processInfo.environment["GALLERYD_TEST_PYTHON"],
            "GALLERYD_TEST_PYTHON is not set: run the tests with scripts/test.sh, which installs flickrapi")
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
            .appendingPathComponent("e2e/flickrapi_e2e.py").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [script, server.baseURL, TestServer.appID, landscape]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(text)")
        #expect(text.contains("\"ok\": true"), "\(text)")
    }
}
