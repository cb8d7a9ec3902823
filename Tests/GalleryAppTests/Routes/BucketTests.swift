import Foundation
import Testing

@testable import GalleryApp

/// `GET`/`HEAD /bucket/<key>`: headers, ranges, conditional requests, S3 XML errors, and keys that
/// try to leave the store. One server with one stored original serves every test.
@Suite(.serialized) final class BucketTests {
    let server: TestServer
    let jpeg: [UInt8]
    let key: String

    init() throws {
        server = try TestServer(workers: 0, listening: true)
        jpeg = try TestJPEG.make(width: 120, height: 90, seed: 31)
        let file = try server.request(
            "POST", "/parse/files/b.jpg", body: Data(jpeg), headers: ["Content-Type": "image/jpeg"])
        let text = try #require(file.json["url"] as? String)
        let url = try #require(URL(string: text))
        key = url.path
        #expect(key.hasPrefix("/bucket/originals/"))
    }

    deinit { server.stop() }

    func get(_ path: String? = nil, headers: [String: String] = [:], method: String = "GET") throws
        -> TestServer.Response
    {
        try server.request(method, path ?? key, headers: headers, appID: nil)
    }

    func raw(_ target: String, method: String = "GET") throws -> RawHTTP.Response {
        try RawHTTP.exchange(
            port: server.application.port, head: "\(method) \(target) HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
    }

    @Test func publicBucket_ServesURLsSignedInThePath_AsPlainOnes_WithImmutableCaching() throws {
        // A URL handed out while the bucket was private keeps working once it is public.
        let signer = AssetURLSigner(
            key: TestServer.urlSigningKey, bucket: "bucket", windowSeconds: 60, validitySeconds: 60)
        let blobKey = String(key.dropFirst("/bucket/".count))
        let signed =
            "/bucket/"
            + String(decoding: signer.pathSegment(forKey: blobKey, expires: signer.expiresNow()), as: UTF8.self)
            + blobKey
        let r = try get(signed)
        #expect(r.status == 200)
        #expect([UInt8](r.body) == jpeg)
        #expect(r.header("Cache-Control") == "public, max-age=31536000, immutable")
    }

    @Test func get_ServesTheBlob_WithValidatorsAndImmutableCaching() throws {
        let r = try get()
        #expect(r.status == 200)
        #expect([UInt8](r.body) == jpeg)
        #expect(r.header("Content-Type") == "image/jpeg")
        #expect(r.header("Content-Length") == "\(jpeg.count)")
        #expect(r.header("Cache-Control") == "public, max-age=31536000, immutable")
        #expect(r.header("Accept-Ranges") == "bytes")
        let etag = try #require(r.header("ETag"))
        #expect(etag.hasPrefix("\"") && etag.hasSuffix("\"") && etag.count > 2, "strong ETag: \(etag)")
        let lastModified = try #require(r.header("Last-Modified"))
        #expect(lastModified.hasSuffix(" GMT"))
        // Same bytes, same validators.
        #expect(try get().header("ETag") == etag)
    }

    @Test func head_HasTheSameHeadersAsGet_AndNoBody() throws {
        let full = try get()
        let head = try raw(key, method: "HEAD")
        #expect(head.status == 200)
        #expect(head.body.isEmpty)
        for name in ["Content-Type", "Content-Length", "ETag", "Last-Modified", "Cache-Control", "Accept-Ranges"] {
            #expect(head.header(name) == full.header(name), "\(name)")
        }
    }

    @Test func range_ServesPartialContent_ForFirstMiddleAndSuffixRanges() throws {
        let n = jpeg.count
        let cases: [(String, Range<Int>)] = [
            ("bytes=0-9", 0..<10), ("bytes=100-199", 100..<200), ("bytes=-50", (n - 50)..<n),
            ("bytes=\(n - 5)-", (n - 5)..<n), ("bytes=\(n - 3)-\(n + 100)", (n - 3)..<n),
        ]
        for (header, range) in cases {
            let r = try get(headers: ["Range": header])
            #expect(r.status == 206, "\(header)")
            #expect([UInt8](r.body) == Array(jpeg[range]), "\(header)")
            #expect(r.header("Content-Range") == "bytes \(range.lowerBound)-\(range.upperBound - 1)/\(n)", "\(header)")
            #expect(r.header("Content-Length") == "\(range.count)", "\(header)")
        }
    }

    @Test func range_Is416_WhenNoByteIsInRange() throws {
        let r = try get(headers: ["Range": "bytes=\(jpeg.count)-"])
        #expect(r.status == 416)
        #expect(r.header("Content-Range") == "bytes */\(jpeg.count)")
        // A range we do not serve (several at once) is answered with the whole file.
        let multi = try get(headers: ["Range": "bytes=0-1,5-6"])
        #expect(multi.status == 200)
        #expect(multi.body.count == jpeg.count)
    }

    @Test func conditional_Is304_WhenTheETagOrDateStillMatches() throws {
        let full = try get()
        let etag = try #require(full.header("ETag"))
        let lastModified = try #require(full.header("Last-Modified"))

        let byTag = try get(headers: ["If-None-Match": etag])
        #expect(byTag.status == 304)
        #expect(byTag.body.isEmpty)
        #expect(byTag.header("ETag") == etag)
        #expect(try get(headers: ["If-None-Match": "\"other\", \(etag)"]).status == 304)
        #expect(try get(headers: ["If-None-Match": "\"other\""]).status == 200)

        #expect(try get(headers: ["If-Modified-Since": lastModified]).status == 304)
        let earlier = try get(headers: ["If-Modified-Since": "Sun, 06 Nov 1994 08:49:37 GMT"])
        #expect(earlier.status == 200)
        #expect(earlier.body.count == jpeg.count)
        // If-None-Match wins over If-Modified-Since (RFC 9110 §13.2.2).
        #expect(try get(headers: ["If-None-Match": "\"other\"", "If-Modified-Since": lastModified]).status == 200)
    }

    @Test func ifRange_ServesTheRange_OnlyWhileTheValidatorMatches() throws {
        let full = try get()
        let etag = try #require(full.header("ETag"))
        let lastModified = try #require(full.header("Last-Modified"))
        let matching = try get(headers: ["Range": "bytes=0-9", "If-Range": etag])
        #expect(matching.status == 206)
        #expect(matching.body.count == 10)
        #expect(try get(headers: ["Range": "bytes=0-9", "If-Range": lastModified]).status == 206)
        let stale = try get(headers: ["Range": "bytes=0-9", "If-Range": "\"stale\""])
        #expect(stale.status == 200)
        #expect([UInt8](stale.body) == jpeg)
        #expect(try get(headers: ["Range": "bytes=0-9", "If-Range": "Sun, 06 Nov 1994 08:49:37 GMT"]).status == 200)
    }

    /// Each bucket GET is counted exactly once, under the route pattern and its status (the
    /// per-thread series shortcut of #17 must neither lose nor double a request, nor file a 404
    /// under the 200's series).
    @Test func metrics_CountEveryBucketGET_Exactly() throws {
        func scrape() throws -> String {
            try server.request("GET", "/metrics", headers: ["X-Parse-Master-Key": TestServer.masterKey], appID: nil)
                .text
        }
        func value(_ text: String, _ series: String) -> Double {
            for line in text.split(separator: "\n") where line.hasPrefix(series + " ") {
                return Double(line.split(separator: " ").last!) ?? -1
            }
            return 0
        }
        let ok = "galleryd_http_requests_total{route=\"/bucket/*key\",method=\"GET\",status=\"200\"}"
        let missing = "galleryd_http_requests_total{route=\"/bucket/*key\",method=\"GET\",status=\"404\"}"
        let durations = "galleryd_http_request_duration_seconds_count{route=\"/bucket/*key\"}"
        let before = try scrape()
        for round in 0..<25 {
            #expect(try get().status == 200)
            if round % 5 == 0 { #expect(try get("/bucket/thumbnails/nosuchid00.jpg").status == 404) }
        }
        let after = try scrape()
        #expect(value(after, ok) == value(before, ok) + 25)
        #expect(value(after, missing) == value(before, missing) + 5)
        #expect(value(after, durations) == value(before, durations) + 30)
    }

    @Test func unknownKey_Is404NoSuchKey_InS3XML() throws {
        let r = try get("/bucket/thumbnails/nosuchid00.jpg")
        #expect(r.status == 404)
        #expect(r.header("Content-Type")?.hasPrefix("application/xml") == true)
        #expect(r.text.contains("<Code>NoSuchKey</Code>"))
        #expect(r.text.contains("<Key>thumbnails/nosuchid00.jpg</Key>"))
        // A directory is not a key either.
        let directory = try get("/bucket/originals")
        #expect(directory.status == 404)
        #expect(directory.text.contains("<Code>NoSuchKey</Code>"))
    }

    @Test func traversal_IsRefusedAs400InvalidArgument_AndNeverServesAFileOutsideTheStore() throws {
        // A secret next to the store, and one inside it under a hidden folder.
        let secretName = "galleryd-secret-\(UUID().uuidString).txt"
        let outside = (server.storage as NSString).deletingLastPathComponent + "/" + secretName
        let secret = "TOP-SECRET-\(UUID().uuidString)"
        try Data(secret.utf8).write(to: URL(fileURLWithPath: outside))
        defer { try? FileManager.default.removeItem(atPath: outside) }
        try Data(secret.utf8).write(to: URL(fileURLWithPath: server.storage + "/.tmp/secret.txt"))
        let original = String(key.dropFirst("/bucket/".count))

        let targets = [
            "/bucket/../\(secretName)",
            "/bucket/originals/../../\(secretName)",
            "/bucket/%2e%2e/\(secretName)",
            "/bucket/originals/%2E%2E/%2e%2e/\(secretName)",
            "/bucket/originals/..%2f..%2f\(secretName)",
            "/bucket/%2f\(outside.dropFirst())",
            "/bucket/\(outside)",
            "/bucket/\(original)%00.txt",
            "/bucket/originals/%00/x.jpg",
            "/bucket/.tmp/secret.txt",
            "/bucket/./\(original)",
            "/bucket/originals//x.jpg",
            "/bucket/originals/a%5c..%5c..%5c\(secretName)",
        ]
        for target in targets {
            for method in ["GET", "HEAD"] {
                let r = try raw(target, method: method)
                #expect(r.status == 400, "\(method) \(target): \(r.status) \(r.text)")
                #expect(!r.text.contains(secret), "\(method) \(target) leaked the secret")
                if method == "GET" {
                    #expect(r.header("Content-Type")?.hasPrefix("application/xml") == true, "\(target)")
                    #expect(r.text.contains("<Code>InvalidArgument</Code>"), "\(target): \(r.text)")
                    #expect(!r.text.contains("\0"), "\(target)")
                }
            }
        }
        // The plain key still works over the same raw path.
        #expect(try raw(key).status == 200)
    }

    @Test func derivatives_AreServed_AsJPEG_OnceProcessed() throws {
        let id = try server.uploadPhoto(try TestJPEG.make(width: 64, height: 48, seed: 32))
        #expect(try get("/bucket/thumbnails/\(id).jpg").status == 404)
        #expect(server.application.makeWorkerPool(threads: 1).drain() == 1)
        for folder in ["thumbnails", "previews"] {
            let r = try get("/bucket/\(folder)/\(id).jpg")
            #expect(r.status == 200)
            #expect(r.header("Content-Type") == "image/jpeg")
            #expect(r.body.starts(with: [0xFF, 0xD8]))
        }
    }

    @Test func otherMethods_AreRefusedInS3XML() throws {
        let r = try server.request("PUT", key, body: Data("x".utf8), appID: nil)
        #expect(r.status == 405)
        #expect(r.text.contains("<Code>MethodNotAllowed</Code>"))
        #expect(try get().status == 200)
    }

    /// A stored blob's answer: no CORS fields without `Origin` (an `<img>`, a download), the grant with
    /// it (a script's `fetch`), and `Vary: Origin` on both and on a 304, so a browser's cache never
    /// hands the first to the second (decision 041, round 10).
    @Test func get_GrantsCORSOnlyWithAnOrigin_AndVariesOnIt() throws {
        let plain = try get()
        #expect(plain.status == 200)
        #expect([UInt8](plain.body) == jpeg)
        #expect(plain.header("Access-Control-Allow-Origin") == nil)
        #expect(plain.header("Access-Control-Expose-Headers") == nil)
        #expect(plain.header("Vary")?.contains("Origin") == true)
        let cross = try get(headers: ["Origin": "http://photos.example:3000"])
        #expect(cross.status == 200)
        #expect([UInt8](cross.body) == jpeg)
        #expect(cross.header("Access-Control-Allow-Origin") == "*")
        #expect(cross.header("Access-Control-Expose-Headers")?.contains("ETag") == true)
        #expect(cross.header("Vary")?.contains("Origin") == true)
        let etag = try #require(plain.header("ETag"))
        let kept = try get(headers: ["If-None-Match": etag])
        #expect(kept.status == 304)
        #expect(kept.header("Vary")?.contains("Origin") == true)
        #expect(try get(method: "HEAD").header("Vary")?.contains("Origin") == true)
    }
}
