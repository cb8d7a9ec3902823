import Crypto
import Foundation
import Testing

@testable import GalleryApp

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The Parse JavaScript SDK's upload (`ParseFile.save` → `saveFile` → `saveBase64`, every release
/// since 3.x): `POST /parse/files/<name>` with no `X-Parse-*` header, `Content-Type: text/plain`
/// and the file as base64 in a JSON body that carries the keys and the session, which Parse Server
/// takes (`handleParseHeaders`, `fileViaJSON`). Before, galleryd stored the JSON text itself and
/// answered 130 (not an image), so no JavaScript app could upload a photo.
@Suite(.serialized) struct UploadJSONFileTests {
    static let jsKey = "test-js-key"

    /// The SDK's body, as `saveBase64` and `RESTController.request` build it (keys after the data).
    static func sdkBody(
        _ bytes: [UInt8]?, type: String = "image/heic", appID: String? = TestServer.appID, jsKey: String? = jsKey,
        session: String? = nil, masterKey: String? = nil, base64: String? = nil
    ) -> Data {
        var object: [String: Any] = [
            "fileData": ["metadata": [:], "tags": [:]] as [String: Any], "_ContentType": type,
        ]
        if let bytes { object["base64"] = Data(bytes).base64EncodedString() }
        if let base64 { object["base64"] = base64 }
        if let appID { object["_ApplicationId"] = appID }
        if let jsKey { object["_JavaScriptKey"] = jsKey }
        object["_ClientVersion"] = "js5.3.0"
        object["_InstallationId"] = "0d7e4a3c-5b1f-4c2e-9a8d-3f6b2c1e0a97"
        if let session { object["_SessionToken"] = session }
        if let masterKey { object["_MasterKey"] = masterKey }
        return try! JSONSerialization.data(withJSONObject: object)
    }

    static func makeServer(listening: Bool = false, maxUploadBytes: Int? = nil) throws -> TestServer {
        try TestServer(workers: 1, listening: listening) {
            $0.restKey = jsKey
            if let maxUploadBytes { $0.maxUploadBytes = maxUploadBytes }
        }
    }

    /// The request as a browser sends the SDK's XHR: no Parse header, `text/plain;charset=UTF-8`.
    static func post(
        _ server: TestServer, _ name: String, _ body: Data, contentType: String = "text/plain;charset=UTF-8"
    )
        throws -> TestServer.Response
    {
        try server.request(
            "POST", "/parse/files/" + name, body: body, headers: ["Content-Type": contentType], appID: nil)
    }

    static func sha(_ bytes: [UInt8]) -> String { SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined() }

    /// A HEIC with the session token and a JPEG with the master key, over the wire: 201 with the
    /// raw upload's answer; the stored original is the decoded bytes with its own type; the user
    /// (or the master key) creates a photo from it that the worker makes ready.
    @Test func sdkUpload_WithASessionOrTheMasterKey_IsStoredAsTheDecodedFile() throws {
        let heic = try UploadFormatTests.allFormats()["heic"]!
        let jpeg = try TestJPEG.make(width: 160, height: 120, seed: 22)
        let server = try Self.makeServer(listening: true)
        defer { server.stop() }
        let user = try server.makeUser("js-uploader")
        let cases: [(bytes: [UInt8], ext: String, type: String, session: String?, master: String?)] = [
            (heic, "heic", "image/heic", user.token, nil), (jpeg, "jpg", "image/jpeg", nil, TestServer.masterKey),
        ]
        for item in cases {
            let body = Self.sdkBody(item.bytes, type: item.type, session: item.session, masterKey: item.master)
            let uploaded = try Self.post(server, "IMG_0001." + item.ext, body)
            #expect(uploaded.status == 201, "\(item.ext): \(uploaded.text)")
            let name = try #require(uploaded.json["name"] as? String, "\(uploaded.text)")
            let url = try #require(uploaded.json["url"] as? String)
            #expect(name == "\(Self.sha(item.bytes)).\(item.ext)")
            #expect(uploaded.header("Location") == url)
            let original = try TestServer.send(URLRequest(url: URL(string: url)!))
            #expect(original.status == 200 && original.header("Content-Type") == item.type, "\(item.ext)")
            #expect([UInt8](original.body) == item.bytes, "\(item.ext): the original is the decoded bytes")
            let created = try server.json(
                "POST", "/parse/classes/Photo", ["original": ["__type": "File", "name": name, "url": url]],
                headers: item.session.map { ["X-Parse-Session-Token": $0, "X-Parse-REST-API-Key": Self.jsKey] } ?? [:])
            let id = try #require(created.json["objectId"] as? String, "\(created.text)")
            #expect(try server.waitForProcessing(id) == "ready", "\(item.ext)")
            #expect(try server.request("GET", "/parse/classes/Photo/\(id)").json["contentType"] as? String == item.type)
        }
    }

    /// The same bytes twice by JSON and once raw: three 201s with the same name, as two raw
    /// uploads of those bytes give; a JSON upload as large as the raw limit allows passes (its
    /// body is 4/3 of it), one a byte over the JSON bound is 413.
    /// In process and over the wire (the server's own body limit).
    @Test(arguments: [false, true]) func sdkUpload_RetriedAndAtTheLimit_BehavesAsARawUpload(listening: Bool) throws {
        let jpeg = try TestJPEG.make(width: 64, height: 48, seed: 5)
        let server = try Self.makeServer(listening: listening, maxUploadBytes: jpeg.count)
        defer { server.stop() }
        let user = try server.makeUser("js-retry")
        let body = Self.sdkBody(jpeg, type: "image/jpeg", session: user.token)
        #expect(body.count > jpeg.count)
        let first = try Self.post(server, "a.jpg", body)
        let second = try Self.post(server, "a.jpg", body)
        let raw = try server.request(
            "POST", "/parse/files/a.jpg", body: Data(jpeg), headers: ["Content-Type": "image/jpeg"])
        #expect(first.status == 201 && second.status == 201 && raw.status == 201, "\(first.text) \(second.text)")
        #expect(first.json["name"] as? String == "\(Self.sha(jpeg)).jpg")
        #expect(second.json["name"] as? String == first.json["name"] as? String)
        #expect(raw.json["name"] as? String == first.json["name"] as? String)
        // The bound: the raw limit's base64 length and 16 KiB of JSON.
        let bound = (jpeg.count + 2) / 3 * 4 + 16 * 1024
        let padded = Self.sdkBody(jpeg, type: "image/jpeg", session: user.token).count
        let over = Self.sdkBody(
            jpeg, type: "image/jpeg", session: user.token,
            base64: Data(jpeg).base64EncodedString() + String(repeating: " ", count: bound - padded + 1))
        #expect(over.count == bound + 1)
        let refused = try Self.post(server, "a.jpg", over)
        #expect(refused.status == 413, "\(refused.text)")
        #expect(try Self.spooled(server).isEmpty)
    }

    /// Every JSON upload slot held (as slow uploads would hold them): the SDK's upload is refused at
    /// once with 503, code 1 and `Retry-After` (which the SDK retries), nothing spooled, while a raw
    /// upload with headers is served; once a slot frees, the same request is stored. The slots are
    /// half the handler threads, as the login slots: a JSON upload holds a handler thread for its
    /// pass, no longer its body in memory (decision 027, session 23).
    @Test func sdkUpload_EverySlotTaken_Is503WithRetryAfter() throws {
        let jpeg = try TestJPEG.make(width: 32, height: 24, seed: 12)
        let server = try Self.makeServer()
        defer { server.stop() }
        let slots = server.application.jsonUploadSlots
        let threads = server.application.configuration.effectiveHandlerThreads
        #expect(threads >= 4 && slots.capacity == threads / 2, "\(slots.capacity) of \(threads)")
        let body = Self.sdkBody(jpeg, type: "image/jpeg", masterKey: TestServer.masterKey)
        func holdingEvery(_ left: Int, _ body: () throws -> Void) throws {
            guard left > 0 else { return try body() }
            try slots.run(refusing: JSONUploadsBusy()) { try holdingEvery(left - 1, body) }
        }
        try holdingEvery(slots.capacity) {
            let busy = try Self.post(server, "busy.jpg", body)
            #expect(busy.status == 503 && busy.header("Retry-After") == "1", "\(busy.text)")
            #expect(busy.json["code"] as? Int == 1)
            let raw = try server.request(
                "POST", "/parse/files/raw.jpg", body: Data(jpeg), headers: ["Content-Type": "image/jpeg"])
            #expect(raw.status == 201, "\(raw.text)")
        }
        #expect(slots.inUse == 0)
        #expect(try Self.spooled(server).isEmpty)
        #expect(try Self.post(server, "busy.jpg", body).status == 201)
    }

    /// Parse Server's answers to a JSON upload it refuses, each with nothing left in the spool:
    /// 403 without keys or with wrong ones (and for a raw file sent without headers, as before),
    /// 130 without a session, 209 for a bad one, 130 for base64 that is not, or is no image.
    @Test func sdkUpload_Refusals_AnswerAsParseServer() throws {
        let jpeg = try TestJPEG.make(width: 32, height: 24, seed: 9)
        let server = try Self.makeServer()
        defer { server.stop() }
        let user = try server.makeUser("js-refused")
        let token = user.token
        let forbidden: [(String, Data, String)] = [
            ("no keys", Self.sdkBody(jpeg, appID: nil, jsKey: nil, session: token), "text/plain;charset=UTF-8"),
            ("no app id", Self.sdkBody(jpeg, appID: nil, session: token), "text/plain"),
            ("wrong app id", Self.sdkBody(jpeg, appID: "other-app", session: token), "text/plain"),
            ("wrong js key", Self.sdkBody(jpeg, jsKey: "other-key", session: token), "text/plain"),
            ("not JSON", Data("base64=abc".utf8), "text/plain"),
            ("raw, sent as JSON", Data(jpeg), "application/json"),
            ("raw, image/jpeg", Data(jpeg), "image/jpeg"),
            ("JSON array", Data("[1,2]".utf8), "application/json"),
        ]
        for (label, body, type) in forbidden {
            let answer = try Self.post(server, "a.jpg", body, contentType: type)
            #expect(answer.status == 403, "\(label): \(answer.text)")
            #expect(answer.json["error"] as? String == "unauthorized", "\(label): \(answer.text)")
        }
        let refused: [(String, Data, Int, String)] = [
            ("no session", Self.sdkBody(jpeg), 130, "File upload by public is disabled."),
            (
                "bad session", Self.sdkBody(jpeg, session: "r:" + String(repeating: "0", count: 32)), 209,
                "Invalid session token"
            ),
            (
                "invalid base64", Self.sdkBody(nil, session: token, base64: "/9j/4AAQ*SkZJRg=="), 130,
                "'*' at character 8"
            ),
            ("bad padding", Self.sdkBody(nil, session: token, base64: "/9j/4A=A"), 130, "invalid"),
            (
                "data URL", Self.sdkBody(nil, session: token, base64: "data:image/jpeg;base64,/9j/4AAQ"), 130,
                "data: URL"
            ),
            ("no base64", Self.sdkBody(nil, session: token), 130, "no base64"),
            ("empty file", Self.sdkBody([], session: token), 130, "empty"),
            ("not an image", Self.sdkBody(Array("hello, world".utf8), session: token), 130, "Unsupported file format"),
        ]
        for (label, body, code, message) in refused {
            let answer = try Self.post(server, "a.jpg", body)
            #expect(answer.status == 400, "\(label): \(answer.text)")
            #expect(answer.json["code"] as? Int == code, "\(label): \(answer.text)")
            #expect(
                message.isEmpty || (answer.json["error"] as? String ?? "").contains(message), "\(label): \(answer.text)"
            )
        }
        #expect(try Self.spooled(server).isEmpty, "no temporary file is left behind")
        // The raw upload with keys is unchanged.
        #expect(
            try server.request(
                "POST", "/parse/files/a.jpg", body: Data(jpeg),
                headers: user.headers.merging(["X-Parse-REST-API-Key": Self.jsKey]) { $1 }
            ).status == 201)
    }

    /// The files in the store's spool directory.
    static func spooled(_ server: TestServer) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: server.application.store.spoolDirectory)
    }
}
