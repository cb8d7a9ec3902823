import Foundation
import Testing

@testable import GalleryApp

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The Flickr API's keys: OAuth 1.0a signatures checked when `flickr_api_secret` is set (Flickr's
/// 96, 97, 98), and photo secrets that change with `url_signing_key` (an old URL is refused after
/// the key is rotated).
@Suite(.serialized) final class FlickrKeysTests {
    static let consumerSecret = "flickr-consumer-secret-for-tests"
    /// The server's `url_signing_key`: TestServer's, rotated.
    static let rotatedKey = "rotated-url-signing-key-7f3a9c1e5b2d4f6a8c0e"
    let server: TestServer
    let photo: String

    init() throws {
        // Listening: OAuth signs the URL the client called, and the flickrapi client runs in another process.
        server = try TestServer(workers: 1, listening: true) {
            $0.publicRead = true
            $0.flickrAPISecret = Self.consumerSecret
            $0.urlSigningKey = Self.rotatedKey
        }
        photo = try server.uploadPhoto(
            TestJPEG.make(width: 800, height: 600, seed: 51), title: "Beach sunset", tags: ["sea"])
        #expect(try server.waitForProcessing(photo) == "ready")
        let created = try server.json("POST", "/parse/classes/Gallery", ["name": "Open", "ACL": ["*": ["read": true]]])
        let gallery = try #require(created.json["objectId"] as? String, "\(created.text)")
        _ = try server.addedItem(gallery: gallery, photo: photo)
    }

    deinit { server.stop() }

    /// A form POST to the endpoint with `form` and an optional `Authorization` header.
    func post(_ form: String, authorization: String? = nil) throws -> TestServer.Response {
        var request = URLRequest(url: URL(string: server.baseURL + "/services/rest/")!)
        request.httpMethod = "POST"
        request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        if let authorization { request.setValue(authorization, forHTTPHeaderField: "Authorization") }
        request.httpBody = Data(form.utf8)
        return try TestServer.send(request)
    }

    /// `Authorization: OAuth …` for a POST of `form`, signed with `secret` (galleryd's own signer:
    /// the route's plumbing; flickrapi below checks the signer against an independent one).
    func authorization(
        form: [(name: String, value: String)], secret: String, extra: [(name: String, value: String)] = []
    ) -> String {
        let oauth: [(name: String, value: String)] =
            [
                ("oauth_consumer_key", TestServer.appID), ("oauth_nonce", "n\(Int.random(in: 0..<1_000_000))"),
                ("oauth_signature_method", "HMAC-SHA1"), ("oauth_timestamp", "1700000000"), ("oauth_version", "1.0"),
            ] + extra
        let uri = "http://127.0.0.1:\(server.application.port)/services/rest/"
        let base =
            "POST&" + FlickrOAuth.encode(uri) + "&"
            + FlickrOAuth.encode(FlickrOAuth.normalizedParameters(form + oauth))
        let signature = FlickrOAuth(consumerSecret: secret).sign(base)
        return "OAuth "
            + (oauth + [(name: "oauth_signature", value: signature)]).map {
                "\($0.name)=\"\(FlickrOAuth.encode($0.value))\""
            }
            .joined(separator: ", ")
    }

    @Test func signatures_AreChecked_WhenASecretIsSet() throws {
        let form: [(name: String, value: String)] = [
            ("method", "flickr.photos.search"), ("tags", "sea"), ("format", "json"), ("nojsoncallback", "1"),
        ]
        let body = form.map { "\($0.name)=\($0.value)" }.joined(separator: "&")
        let signed = try post(body, authorization: authorization(form: form, secret: Self.consumerSecret))
        #expect((signed.json["photos"] as? [String: Any])?["total"] as? Int == 1, "\(signed.text)")
        let forged = try post(body, authorization: authorization(form: form, secret: "another-secret"))
        #expect(forged.json["code"] as? Int == 96 && forged.json["message"] as? String == "Invalid signature")
        // A signature over other arguments than those sent.
        let moved = try post(
            body + "&per_page=1", authorization: authorization(form: form, secret: Self.consumerSecret))
        #expect(moved.json["code"] as? Int == 96)
        let missing = try post(body + "&oauth_consumer_key=\(TestServer.appID)&oauth_signature_method=HMAC-SHA1")
        #expect(missing.json["code"] as? Int == 97 && missing.json["message"] as? String == "Missing signature")
        let withToken = try post(
            body,
            authorization: authorization(form: form, secret: Self.consumerSecret, extra: [("oauth_token", "t-1")]))
        #expect(withToken.json["code"] as? Int == 98, "galleryd issues no OAuth tokens")
        let plaintext = try post(
            body + "&oauth_consumer_key=\(TestServer.appID)&oauth_signature_method=PLAINTEXT"
                + "&oauth_signature=\(FlickrOAuth.encode(Self.consumerSecret + "&"))")
        #expect(plaintext.json["code"] as? Int == 96, "HMAC-SHA1 only")
        // An unsigned api_key call (PhotoViewer's) still answers, and in XML the error is Flickr's too.
        let unsigned = try server.request(
            "GET", "/services/rest/?method=flickr.photos.search&api_key=\(TestServer.appID)&tags=sea", appID: nil)
        #expect(unsigned.text.contains("total=\"1\""), "\(unsigned.text)")
        let forgedXML = try post(
            "method=flickr.test.echo&oauth_consumer_key=\(TestServer.appID)&oauth_signature_method=HMAC-SHA1"
                + "&oauth_signature=AAAA")
        #expect(forgedXML.text.contains("<err code=\"96\" msg=\"Invalid signature\" />"))
    }

    @Test func signer_MatchesRFC5849() {
        // RFC 5849 §3.4.1.3.2's example parameters, normalized.
        let items: [(name: String, value: String)] = [
            ("b5", "=%3D"), ("a3", "a"), ("c@", ""), ("a2", "r b"), ("oauth_consumer_key", "9djdj82h48djs9d2"),
            ("oauth_token", "kkk9d7dh3k39sjv7"), ("oauth_signature_method", "HMAC-SHA1"),
            ("oauth_timestamp", "137131201"), ("oauth_nonce", "7d8f3e4a"), ("c2", ""), ("a3", "2 q"),
        ]
        #expect(
            FlickrOAuth.normalizedParameters(items)
                == "a2=r%20b&a3=2%20q&a3=a&b5=%3D%253D&c%40=&c2=&oauth_consumer_key=9djdj82h48djs9d2&oauth_nonce=7d8f3e4a"
                + "&oauth_signature_method=HMAC-SHA1&oauth_timestamp=137131201&oauth_token=kkk9d7dh3k39sjv7")
        // HMAC-SHA1 under "<encoded secret>&" (Python's hmac gives the same).
        let base = "GET&http%3A%2F%2Fphotos.example.net%2Fservices%2Frest%2F&a%3D1%26oauth_consumer_key%3Dk"
        #expect(FlickrOAuth(consumerSecret: "s cret").sign(base) == "2BTr0xaKLHXaxkAvNrFMuFn/98I=")
        #expect(FlickrOAuth.encode("héllo ~*") == "h%C3%A9llo%20~%2A")
    }

    @Test func flickrapi_FromPyPI_SignsAsGalleryChecks() throws {
        let python = try #require(
            ProcessInfo.processInfo.environment["GALLERYD_TEST_PYTHON"],
            "GALLERYD_TEST_PYTHON is not set: run the tests with scripts/test.sh, which installs flickrapi")
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("e2e/flickrapi_oauth_e2e.py").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [script, server.baseURL, TestServer.appID, Self.consumerSecret, photo]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0 && text.contains("\"ok\": true"), "\(text)")
    }

    @Test func photoSecrets_ChangeWithTheSigningKey_AndOldOnesAreRefused() throws {
        let old = FlickrSecrets(key: TestServer.urlSigningKey)
        let new = FlickrSecrets(key: Self.rotatedKey)
        #expect(old.secret(photoId: photo) != new.secret(photoId: photo))
        #expect(!new.verify(old.secret(photoId: photo), photoId: photo, original: false))
        let path = "/flickr-assets/1/\(photo)_"
        let stale = try server.request("GET", path + old.secret(photoId: photo) + "_m.jpg", appID: nil)
        #expect(stale.status == 403, "a URL handed out under the old key")
        let staleOriginal = try server.request(
            "GET", path + old.originalSecret(photoId: photo) + "_o.jpg", appID: nil)
        #expect(staleOriginal.status == 403)
        #expect(try server.request("GET", path + new.secret(photoId: photo) + "_m.jpg", appID: nil).status == 200)
        // And what the API hands out now is the new key's.
        let info = try server.request(
            "GET",
            "/services/rest/?method=flickr.photos.getInfo&api_key=\(TestServer.appID)&photo_id=\(photo)&format=json&nojsoncallback=1",
            appID: nil)
        #expect((info.json["photo"] as? [String: Any])?["secret"] as? String == new.secret(photoId: photo))
    }
}
