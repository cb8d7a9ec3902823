import Crypto
import Foundation
import Testing

@testable import GalleryApp

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// HEIC and PNG originals as real clients send and read them (issue #28): ParseSwift's upload
/// request over URLSession, and in another process parse_rest, a LiveQuery client, boto3 and
/// flickrapi (Tests/e2e/formats_clients_e2e.py). Each gets what Parse Server, S3 or Flickr would
/// give it for a JPEG, with the original's own name, type and bytes.
@Suite(.serialized) struct UploadFormatClientTests {
    /// ParseSwift 4's upload (`ParseFile.save`, `API.getHeaders`): `POST /files/<name>` with the
    /// body as it is, through `URLSession.uploadTask`; the name is `file` unless the app gave one,
    /// and `Content-Type` is the app's `mimeType` or, without one, removed (`.removeMimeType`), so
    /// URLSession sends its own default; the SDK's version, installation and request id headers.
    /// The SDK then saves the object with the `File` it decoded from the answer.
    @Test func parseSwiftsUpload_WithOrWithoutAName_AndAType_IsStoredAndServedAsItsFormat() throws {
        let files = try UploadFormatTests.allFormats()
        let server = try TestServer(workers: 1, listening: true)
        defer { server.stop() }
        let cases: [(ext: String, name: String, mimeType: String?, type: String)] = [
            ("heic", "file", nil, "image/heic"), ("png", "Screenshot.png", "image/png", "image/png"),
            ("webp", "IMG_0002.HEIC", "image/heic", "image/webp"),
        ]
        for item in cases {
            let bytes = files[item.ext]!
            var request = URLRequest(url: URL(string: server.baseURL + "/parse/files/" + item.name)!)
            request.httpMethod = "POST"
            let headers = [
                "X-Parse-Application-Id": TestServer.appID, "X-Parse-Master-Key": TestServer.masterKey,
                "X-Parse-Client-Version": "swift4.14.2",
                "X-Parse-Installation-Id": "6c1b4d8e-0000-4000-8000-000000000000",
                "X-Parse-Request-Id": UUID().uuidString.lowercased(),
            ]
            for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
            if let mimeType = item.mimeType { request.setValue(mimeType, forHTTPHeaderField: "Content-Type") }
            let uploaded = try Self.upload(request, Data(bytes))
            #expect(uploaded.status == 201, "\(item.name): \(uploaded.text)")
            let sha = SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
            let name = try #require(uploaded.json["name"] as? String, "\(uploaded.text)")
            let url = try #require(uploaded.json["url"] as? String, "\(uploaded.text)")
            #expect(name == "\(sha).\(item.ext)", "\(item.name)")
            let created = try server.json(
                "POST", "/parse/classes/Photo", ["original": ["__type": "File", "name": name, "url": url]])
            let id = try #require(created.json["objectId"] as? String, "\(created.text)")
            #expect(try server.waitForProcessing(id) == "ready", "\(item.name)")
            #expect(try server.request("GET", "/parse/classes/Photo/\(id)").json["contentType"] as? String == item.type)
            let original = try TestServer.send(URLRequest(url: URL(string: url)!))
            #expect(original.status == 200 && original.header("Content-Type") == item.type, "\(item.name)")
            #expect([UInt8](original.body) == bytes, "\(item.name): the original is served byte for byte")
        }
    }

    /// parse_rest, a LiveQuery client, boto3 and flickrapi, each as a user of it would call it,
    /// in another process (the script says what each checks).
    @Test func pythonClients_UploadCreateWatchAndRead_AHEICAndAPNG() throws {
        let files = try UploadFormatTests.allFormats()
        let server = try TestServer(workers: 1, listening: true) {
            $0.restKey = "test-rest-key"
            $0.publicRead = true
        }
        defer { server.stop() }
        #expect(server.application.liveQuery.waitUntilListening(timeout: 10))
        let folder = NSTemporaryDirectory() + "galleryd-format-clients-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        for ext in ["heic", "png"] {
            try Data(files[ext]!).write(to: URL(fileURLWithPath: "\(folder)/photo.\(ext)"))
        }
        let run = try runLiveQueryScript(
            "formats_clients_e2e.py",
            [
                server.baseURL, TestServer.appID, "test-rest-key", TestServer.masterKey, "\(folder)/photo.heic",
                "\(folder)/photo.png",
            ])
        #expect(run.status == 0, "\(run.output)")
        #expect(run.output.contains("\"ok\": true"), "\(run.output)")
    }

    /// One `URLSession.uploadTask(with:from:)`, as ParseSwift sends a file's data.
    static func upload(_ request: URLRequest, _ body: Data) throws -> TestServer.Response {
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var result: Result<TestServer.Response, any Error> = .failure(
            TestSetupError(description: "no answer"))
        let task = URLSession.shared.uploadTask(with: request, from: body) { data, response, error in
            if let error {
                result = .failure(error)
            } else if let http = response as? HTTPURLResponse {
                var headers: [String: String] = [:]
                for (key, value) in http.allHeaderFields { headers["\(key)"] = "\(value)" }
                result = .success(TestServer.Response(status: http.statusCode, headers: headers, body: data ?? Data()))
            }
            done.signal()
        }
        task.resume()
        done.wait()
        return try result.get()
    }
}
