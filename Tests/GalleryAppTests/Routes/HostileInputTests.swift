import Foundation
import Synchronization
import Testing

@testable import GalleryApp

/// Regression tests for what bench/fuzz/http_fuzz.py found in the app: each sends the input that
/// got a 500 (or worse) and expects the clear 4xx of the route's format, with the data untouched.
@Suite(.serialized) struct HostileInputTests {
    /// Fuzzer input: `GET /parse/classes/Photo/abc%00def`. The NUL reached the SQL parameter, which
    /// PostgreSQL cannot take, and every method answered 500. An id no object can have is now 101.
    @Test func objectIdWithNUL_Is101_ForEveryMethod_AndChangesNothing() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let photo = try server.uploadPhoto(try TestJPEG.make(width: 32, height: 24, seed: 7), title: "kept")
        let gallery = try server.json("POST", "/parse/classes/Gallery", ["name": "kept"]).json["objectId"] as! String
        for (className, id) in [("Photo", photo), ("Gallery", gallery), ("GalleryItem", "abcdefghij")] {
            for suffix in ["%00", "%00x", "%20x", "%0d%0a"] {
                let path = "/parse/classes/\(className)/\(id)\(suffix)"
                let get = try server.request("GET", path)
                #expect(get.status == 404, "GET \(path)")
                #expect(get.json["code"] as? Int == 101)
                let put = try server.json("PUT", path, ["title": "changed", "name": "changed"])
                #expect(put.status == 404, "PUT \(path)")
                #expect(put.json["code"] as? Int == 101)
                let delete = try server.request("DELETE", path, headers: ["X-Parse-Master-Key": TestServer.masterKey])
                #expect(delete.status == 404, "DELETE \(path)")
                #expect(delete.json["code"] as? Int == 101)
            }
        }
        // Nothing changed.
        let kept = try server.request("GET", "/parse/classes/Photo/\(photo)")
        #expect(kept.json["title"] as? String == "kept")
        #expect(kept.json["deletedAt"] == nil)
        #expect(try server.request("GET", "/parse/classes/Gallery/\(gallery)").json["name"] as? String == "kept")
    }

    /// Fuzzer input: `GET /bucket/originals/<300 characters>.jpg`. stat(2) failed with ENAMETOOLONG and
    /// the bucket answered 500 InternalError. A segment longer than NAME_MAX is an invalid key: 400.
    @Test func bucketKeyWithOverlongSegment_Is400InvalidArgument() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        for key in [
            "originals/" + String(repeating: "a", count: 300) + ".jpg", String(repeating: "b", count: 256),
            "thumbnails/" + String(repeating: "c", count: 256) + "/x.jpg",
        ] {
            for method in ["GET", "HEAD"] {
                let r = try server.request(method, "/bucket/\(key)", appID: nil)
                #expect(r.status == 400, "\(method) \(key.prefix(30))")
                #expect(r.header("Content-Type") == "application/xml")
                if method == "GET" { #expect(r.text.contains("<Code>InvalidArgument</Code>")) }
            }
        }
        // A 255-byte segment is still just a key that does not exist.
        let r = try server.request("GET", "/bucket/originals/" + String(repeating: "d", count: 255), appID: nil)
        #expect(r.status == 404)
        #expect(r.text.contains("<Code>NoSuchKey</Code>"))
    }

    /// Fuzzer inputs: `Range: bytes=-0` (416) and `If-Match: "x"` (412) on a bucket key came back
    /// with empty bodies, unlike every other bucket error; S3 clients expect InvalidRange and
    /// PreconditionFailed documents.
    @Test func bucketRangeAndPreconditionFailures_AreS3Documents() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let upload = try server.request(
            "POST", "/parse/files/a.jpg", body: Data(try TestJPEG.make(width: 16, height: 16, seed: 3)),
            headers: ["Content-Type": "image/jpeg"])
        let url = try #require(upload.json["url"] as? String)
        let range = try #require(url.range(of: "/bucket/"))
        let path = String(url[range.lowerBound...])
        let cases: [([String: String], Int, String)] = [
            (["Range": "bytes=-0"], 416, "InvalidRange"),
            (["Range": "bytes=999999-"], 416, "InvalidRange"),
            (["If-Match": "\"x\""], 412, "PreconditionFailed"),
            (["If-Unmodified-Since": "Thu, 01 Jan 1970 00:00:00 GMT"], 412, "PreconditionFailed"),
        ]
        for (headers, status, code) in cases {
            let r = try server.request("GET", path, headers: headers, appID: nil)
            #expect(r.status == status)
            #expect(r.header("Content-Type") == "application/xml")
            #expect(r.text.contains("<Code>\(code)</Code>"), "\(headers)")
            if status == 416 { #expect(r.header("Content-Range")?.hasPrefix("bytes */") == true) }
        }
        // The file itself is still served.
        #expect(try server.request("GET", path, appID: nil).status == 200)
    }

    /// Found by the fuzzer's concurrent mix, made exact here: a client retrying `POST /classes/Photo`
    /// for the same uploaded file while the first attempt was still in flight got 400 (137, a
    /// duplicate checksum) instead of the existing photo. Every concurrent create answers that photo.
    @Test func concurrentCreatesOfTheSamePhoto_AllAnswerTheOnePhoto() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let attempts = 16
        for seed in 0..<3 as Range<UInt64> {
            let upload = try server.request(
                "POST", "/parse/files/same.jpg", body: Data(try TestJPEG.make(width: 16, height: 16, seed: 40 + seed)),
                headers: ["Content-Type": "image/jpeg"])
            let name = try #require(upload.json["name"] as? String)
            let collected = Mutex<[(Int, String?)]>([])
            DispatchQueue.concurrentPerform(iterations: attempts) { _ in
                let r = try? server.json(
                    "POST", "/parse/classes/Photo", ["original": ["__type": "File", "name": name]])
                let answer = (r?.status ?? 0, r?.json["objectId"] as? String)
                collected.withLock { $0.append(answer) }
            }
            let answers = collected.withLock { $0 }
            #expect(answers.filter { $0.0 == 201 }.count == 1, "\(answers.map { $0.0 })")
            #expect(answers.filter { $0.0 == 200 }.count == attempts - 1)
            #expect(Set(answers.map { $0.1 }).count == 1)
        }
        let count = try server.application.pool.query("select count(*)::bigint as n from photos").first!.decode(
            Int.self, "n")
        #expect(count == 3)
    }

    /// Found by the same concurrent mix: uploads of the same bytes at once sometimes got 400 (137,
    /// about 1 in 100 in a release build): one insert into `files` lost the race on the name key,
    /// which `on conflict (checksum)` does not cover. The race window is too narrow to hit on demand,
    /// so the second half puts a row with that name in the way directly: a conflict on any key of
    /// `files` means the file is already recorded, and the upload gets its 201.
    @Test func uploadsOfTheSameBytes_Succeed_WhenTheirNameIsAlreadyTaken() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let attempts = 12
        for seed in 0..<4 as Range<UInt64> {
            let jpeg = Data(try TestJPEG.make(width: 16, height: 16, seed: 60 + seed))
            let collected = Mutex<[Int]>([])
            DispatchQueue.concurrentPerform(iterations: attempts) { _ in
                let r = try? server.request(
                    "POST", "/parse/files/same.jpg", body: jpeg, headers: ["Content-Type": "image/jpeg"])
                let status = r?.status ?? 0
                collected.withLock { $0.append(status) }
            }
            let statuses = collected.withLock { $0 }
            #expect(statuses.allSatisfy { $0 == 201 }, "\(statuses)")
        }
        let jpeg = try TestJPEG.make(width: 16, height: 16, seed: 70)
        let digest = SHA256BodyObserver()
        try jpeg.withUnsafeBytes { try digest.consume($0) }
        let name = "\(digest.hexDigest).jpg"
        try server.application.pool.query(
            "insert into files (name, key, checksum, byte_size) values ($1, $2, 'another', 1)",
            [name, "originals/" + name])
        let upload = try server.request(
            "POST", "/parse/files/same.jpg", body: Data(jpeg), headers: ["Content-Type": "image/jpeg"])
        #expect(upload.status == 201, "\(upload.text)")
        #expect(upload.json["name"] as? String == name)
    }
}
