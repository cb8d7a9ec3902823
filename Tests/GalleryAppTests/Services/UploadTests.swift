import Crypto
import Foundation
import Postgres
import Testing

@testable import GalleryApp
@testable import Imaging

/// `POST /parse/files/:name` and `POST /parse/classes/Photo` against a real server, database and
/// blob directory: the happy path down to the derivatives served by the bucket, EXIF-rotated
/// sizes, deduplication, and every refusal leaving no row and no file behind.
@Suite(.serialized) struct UploadTests {
    /// Small derivative sizes so that the small test images are still shrunk.
    static func smallDerivatives(_ configuration: inout GalleryConfiguration) {
        configuration.thumbnailSize = 32
        configuration.previewSize = 96
    }

    @Test func upload_BecomesReadyPhoto_WithThumbnailAndPreviewServedByTheBucket() throws {
        let server = try TestServer(workers: 1, configure: Self.smallDerivatives)
        defer { server.stop() }
        let jpeg = try TestJPEG.make(width: 160, height: 120, seed: 11)
        let sha = SHA256.hash(data: jpeg).map { String(format: "%02x", $0) }.joined()

        let file = try server.request(
            "POST", "/parse/files/holiday.jpg", body: Data(jpeg), headers: ["Content-Type": "image/jpeg"])
        #expect(file.status == 201)
        #expect(file.json["name"] as? String == "\(sha).jpg")
        let fileURL = try #require(file.json["url"] as? String)
        #expect(fileURL.hasSuffix("/bucket/originals/\(sha).jpg"))
        #expect(file.header("Location") == fileURL)

        let created = try server.json(
            "POST", "/parse/classes/Photo",
            [
                "original": ["__type": "File", "name": "\(sha).jpg"], "title": "Beach", "tags": ["sea", "sun"],
            ])
        #expect(created.status == 201)
        let id = try #require(created.json["objectId"] as? String)
        #expect(id.count == 10)
        #expect(created.header("Location")?.hasSuffix("/parse/classes/Photo/\(id)") == true)
        #expect(created.json["createdAt"] is String)
        // The photo and its job were created together.
        #expect(try server.scalar("select count(*)::bigint from jobs where photo_id = $1", [id]) == 1)

        #expect(try server.waitForProcessing(id) == "ready")
        let photo = try server.request("GET", "/parse/classes/Photo/\(id)").json
        #expect(photo["width"] as? Int == 160)
        #expect(photo["height"] as? Int == 120)
        #expect(photo["filename"] as? String == "holiday.jpg")
        #expect(photo["title"] as? String == "Beach")
        #expect(photo["tags"] as? [String] == ["sea", "sun"])
        #expect(photo["checksum"] as? String == sha)
        #expect(photo["byteSize"] as? Int == jpeg.count)
        #expect((photo["dominantColor"] as? String)?.hasPrefix("#") == true)
        // Thumbnail: shorter edge 32 (160×120 → 43×32); preview: longer edge 96 (→ 96×72).
        #expect(photo["thumbnailWidth"] as? Int == 43)
        #expect(photo["thumbnailHeight"] as? Int == 32)
        #expect(photo["previewWidth"] as? Int == 96)
        #expect(photo["previewHeight"] as? Int == 72)

        let thumbnail = try server.fetchFile(photo["thumbnail"])
        #expect(thumbnail.status == 200)
        #expect(thumbnail.header("Content-Type") == "image/jpeg")
        let thumbnailInfo = try ImageProbe.probe(bytes: [UInt8](thumbnail.body))
        #expect(thumbnailInfo.width == 43 && thumbnailInfo.height == 32)
        let preview = try server.fetchFile(photo["preview"])
        let previewInfo = try ImageProbe.probe(bytes: [UInt8](preview.body))
        #expect(previewInfo.width == 96 && previewInfo.height == 72)
        let original = try server.fetchFile(photo["original"])
        #expect([UInt8](original.body) == jpeg)
    }

    @Test func upload_NeverEnlarges_WhenTheImageIsSmallerThanTheTargets() throws {
        let server = try TestServer(workers: 1, configure: Self.smallDerivatives)
        defer { server.stop() }
        let id = try server.uploadPhoto(try TestJPEG.make(width: 40, height: 30, seed: 12))
        #expect(try server.waitForProcessing(id) == "ready")
        let photo = try server.request("GET", "/parse/classes/Photo/\(id)").json
        for prefix in ["thumbnail", "preview"] {
            #expect(photo["\(prefix)Width"] as? Int == 40)
            #expect(photo["\(prefix)Height"] as? Int == 30)
            let info = try ImageProbe.probe(bytes: [UInt8](try server.fetchFile(photo[prefix]).body))
            #expect(info.width == 40 && info.height == 30, "\(prefix) was resized to \(info.width)×\(info.height)")
        }
    }

    @Test func upload_ReportsDisplayedSize_WhenEXIFRotatesTheImage() throws {
        let server = try TestServer(workers: 0, configure: Self.smallDerivatives)
        defer { server.stop() }
        // Stored 120×80, orientation 6 (rotate 90° clockwise to display): displayed 80×120.
        let jpeg = TestJPEG.withOrientation(try TestJPEG.make(width: 120, height: 80, seed: 13), 6)
        let id = try server.uploadPhoto(jpeg)
        // Known before any processing, so a client can lay out the cell at once.
        var photo = try server.request("GET", "/parse/classes/Photo/\(id)").json
        #expect(photo["status"] as? String == "pending")
        #expect(photo["width"] as? Int == 80)
        #expect(photo["height"] as? Int == 120)
        #expect(try #require(photo["aspectRatio"] as? Double) == Double(80) / 120)

        #expect(server.application.makeWorkerPool(threads: 1).drain() == 1)
        photo = try server.request("GET", "/parse/classes/Photo/\(id)").json
        #expect(photo["status"] as? String == "ready")
        #expect(photo["width"] as? Int == 80)
        #expect(photo["height"] as? Int == 120)
        // Derivatives are stored upright: thumbnail shorter edge 32 → 32×48, preview longer edge 96 → 64×96.
        #expect(photo["thumbnailWidth"] as? Int == 32)
        #expect(photo["thumbnailHeight"] as? Int == 48)
        let thumbnail = try ImageProbe.probe(bytes: [UInt8](try server.fetchFile(photo["thumbnail"]).body))
        #expect(thumbnail.displayWidth == 32 && thumbnail.displayHeight == 48)
        let preview = try ImageProbe.probe(bytes: [UInt8](try server.fetchFile(photo["preview"]).body))
        #expect(preview.displayWidth == 64 && preview.displayHeight == 96)
    }

    @Test func upload_GivesBackTheExistingPhoto_WhenTheSameBytesAreUploadedAgain() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let jpeg = try TestJPEG.make(width: 64, height: 48, seed: 14)
        let first = try server.uploadPhoto(jpeg, name: "a.jpg")
        let again = try server.request(
            "POST", "/parse/files/b.jpg", body: Data(jpeg), headers: ["Content-Type": "image/jpeg"])
        #expect(again.status == 201)
        let created = try server.json(
            "POST", "/parse/classes/Photo",
            [
                "original": ["__type": "File", "name": try #require(again.json["name"] as? String)]
            ])
        #expect(created.status == 200)
        #expect(created.json["objectId"] as? String == first)
        #expect(try server.scalar("select count(*)::bigint from photos") == 1)
        #expect(try server.scalar("select count(*)::bigint from files") == 1)
        #expect(try server.scalar("select count(*)::bigint from jobs") == 1)
        #expect(server.blobFiles(under: "originals").count == 1)
    }

    @Test func upload_GivesOnePhoto_WhenTheSameBytesAreUploadedConcurrently() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let jpeg = try TestJPEG.make(width: 64, height: 48, seed: 20)
        let results = UploadResults(count: 8)
        DispatchQueue.concurrentPerform(iterations: 8) { index in
            results.set(index, Result { try server.uploadPhoto(jpeg, name: "same\(index).jpg") })
        }
        let ids = try results.all.map { try #require($0).get() }
        #expect(Set(ids).count == 1)
        #expect(try server.scalar("select count(*)::bigint from photos") == 1)
        #expect(try server.scalar("select count(*)::bigint from files") == 1)
        #expect(try server.scalar("select count(*)::bigint from jobs") == 1)
        #expect(server.blobFiles(under: "originals").count == 1)
    }

    @Test func createPhoto_Fails_WhenTheFileWasNeverUploaded() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let r = try server.json("POST", "/parse/classes/Photo", ["original": ["__type": "File", "name": "nosuch.jpg"]])
        #expect(r.status == 400)
        #expect(r.json["code"] as? Int == 111)
        #expect(try server.scalar("select count(*)::bigint from photos") == 0)
        #expect(try server.scalar("select count(*)::bigint from jobs") == 0)
    }

    /// Bodies the upload must refuse with 400 and Parse code 130.
    static let unreadable: [(name: String, bytes: @Sendable () throws -> [UInt8])] = [
        (
            "png",
            {
                [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13] + Array("IHDR".utf8)
                    + [UInt8](repeating: 7, count: 200)
            }
        ),
        ("text", { Array("hello, this is not a picture at all\n".utf8) }),
        ("corrupt", { [0xFF, 0xD8] + [UInt8](repeating: 0x42, count: 500) }),
        ("truncated header", { Array(try TestJPEG.make(width: 64, height: 64, seed: 15).prefix(60)) }),
        ("SOI only", { [0xFF, 0xD8] }),
    ]

    @Test(arguments: 0..<5)
    func upload_IsRefusedWith130_AndLeavesNothingBehind_WhenTheBytesAreNotAReadableJPEG(_ index: Int) throws {
        let (label, make) = Self.unreadable[index]
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let r = try server.request(
            "POST", "/parse/files/bad.jpg", body: Data(try make()), headers: ["Content-Type": "image/jpeg"])
        #expect(r.status == 400, "\(label)")
        #expect(r.json["code"] as? Int == 130, "\(label): \(r.text)")
        #expect(r.json["error"] is String)
        try server.expectNothingStored(label)
    }

    @Test func upload_IsRefusedWith130_WhenTheImageHasMorePixelsThanTheLimit() throws {
        let server = try TestServer(workers: 0) { $0.maxPixels = 64 * 64 - 1 }
        defer { server.stop() }
        let r = try server.request(
            "POST", "/parse/files/big.jpg", body: Data(try TestJPEG.make(width: 64, height: 64, seed: 16)),
            headers: ["Content-Type": "image/jpeg"])
        #expect(r.status == 400)
        #expect(r.json["code"] as? Int == 130)
        #expect((r.json["error"] as? String)?.contains("64x64") == true)
        try server.expectNothingStored("pixels")
        // Exactly at the limit is fine.
        let fits = try server.request(
            "POST", "/parse/files/ok.jpg", body: Data(try TestJPEG.make(width: 63, height: 65, seed: 16)),
            headers: ["Content-Type": "image/jpeg"])
        #expect(fits.status == 201)
    }

    @Test func upload_IsRefusedWith413_WhenTheBodyIsLargerThanTheUploadLimit() throws {
        let jpeg = try TestJPEG.make(width: 96, height: 96, seed: 17)
        let server = try TestServer(workers: 0, listening: true) { $0.maxUploadBytes = jpeg.count - 1 }
        defer { server.stop() }
        let r = try server.request(
            "POST", "/parse/files/big.jpg", body: Data(jpeg), headers: ["Content-Type": "image/jpeg"])
        #expect(r.status == 413)
        #expect(r.json["code"] as? Int == 129)
        try server.expectNothingStored("size")
        // The same limit with chunked encoding (no Content-Length to refuse up front): still 413, nothing kept.
        let chunked = try RawHTTP.exchange(
            port: server.application.port,
            head:
                "POST /parse/files/big.jpg HTTP/1.1\r\nHost: t\r\nX-Parse-Application-Id: gallery\r\nX-Parse-Master-Key: \(TestServer.masterKey)\r\n"
                + "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n",
            body: RawHTTP.chunked(jpeg, size: 1000))
        #expect(chunked.status == 413)
        try server.expectNothingStored("size, chunked")
    }

    @Test func upload_ThatStalls_Gets408InParseJSON_AndLeavesNothing() throws {
        let jpeg = try TestJPEG.make(width: 96, height: 96, seed: 21)
        let server = try TestServer(workers: 0, listening: true) { $0.bodyTimeoutMs = 300 }
        defer { server.stop() }
        // Half the announced bytes, then silence.
        let r = try RawHTTP.exchange(
            port: server.application.port,
            head:
                "POST /parse/files/stalled.jpg HTTP/1.1\r\nHost: t\r\nX-Parse-Application-Id: gallery\r\nX-Parse-Master-Key: \(TestServer.masterKey)\r\n"
                + "Content-Type: image/jpeg\r\nContent-Length: \(jpeg.count)\r\n\r\n",
            body: Array(jpeg[..<(jpeg.count / 2)]))
        #expect(r.status == 408)
        let json = try JSONSerialization.jsonObject(with: Data(r.body)) as? [String: Any]
        #expect(json?["code"] as? Int == 124)
        #expect(r.header("Content-Type")?.hasPrefix("application/json") == true)
        try server.expectNothingStored("stalled upload")
    }

    @Test func upload_IsRefusedWith403_WithoutTheApplicationID() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let jpeg = Data(try TestJPEG.make(width: 32, height: 32, seed: 18))
        let none = try server.request(
            "POST", "/parse/files/a.jpg", body: jpeg, headers: ["Content-Type": "image/jpeg"], appID: nil)
        #expect(none.status == 403)
        #expect(none.json["error"] as? String == "unauthorized")
        let wrong = try server.request(
            "POST", "/parse/files/a.jpg", body: jpeg, headers: ["Content-Type": "image/jpeg"], appID: "other")
        #expect(wrong.status == 403)
        try server.expectNothingStored("no app id")
        let photo = try server.request(
            "POST", "/parse/classes/Photo", body: Data(#"{"original":{"__type":"File","name":"x.jpg"}}"#.utf8),
            appID: nil)
        #expect(photo.status == 403)
    }

    @Test func upload_IsRefused_WhenTheFileNameIsInvalid() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let jpeg = Data(try TestJPEG.make(width: 32, height: 32, seed: 19))
        let r = try server.request(
            "POST", "/parse/files/" + String(repeating: "a", count: 200) + ".jpg", body: jpeg,
            headers: ["Content-Type": "image/jpeg"])
        #expect(r.status == 400)
        #expect(r.json["code"] as? Int == 122)
        try server.expectNothingStored("file name")
    }
}

extension TestServer {
    /// A single integer from SQL (e.g. a count).
    func scalar(_ sql: String, _ binds: [PostgresBindable?] = []) throws -> Int {
        let rows = try application.pool.query(sql, binds)
        return try #require(rows.first).decode(Int.self, 0)
    }

    /// Regular files under a folder of the blob store (recursively), as paths relative to it.
    func blobFiles(under folder: String) -> [String] {
        let root = storage + "/" + folder
        guard let walker = FileManager.default.enumerator(atPath: root) else { return [] }
        var files: [String] = []
        while let name = walker.nextObject() as? String {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: root + "/" + name, isDirectory: &isDirectory),
                !isDirectory.boolValue
            {
                files.append(name)
            }
        }
        return files
    }

    /// Fails the test when a refused upload left a row in `files`/`photos`/`jobs`, an original, or
    /// (once the server has finished with the request) a spooled temporary file.
    func expectNothingStored(_ label: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(
            try scalar("select count(*)::bigint from files") == 0, "\(label): files row", sourceLocation: sourceLocation
        )
        #expect(
            try scalar("select count(*)::bigint from photos") == 0, "\(label): photos row",
            sourceLocation: sourceLocation)
        #expect(
            try scalar("select count(*)::bigint from jobs") == 0, "\(label): jobs row", sourceLocation: sourceLocation)
        #expect(blobFiles(under: "originals").isEmpty, "\(label): original stored", sourceLocation: sourceLocation)
        // The HTTP layer removes a spooled body right after the response; allow it a moment.
        let deadline = Date().addingTimeInterval(30)
        while !temporaryFiles().isEmpty && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        #expect(temporaryFiles().isEmpty, "\(label): temporary file left", sourceLocation: sourceLocation)
    }

    /// Files under `.tmp` (spooled bodies, blobs being written), without the lock file each store
    /// keeps beside its own temporary directory while it lives.
    func temporaryFiles() -> [String] {
        blobFiles(under: ".tmp").filter { !$0.hasSuffix(".lock") }
    }

    /// GETs the bucket URL of a Parse File value (`{"__type":"File","url":…}`) from this server.
    func fetchFile(_ value: Any?) throws -> Response {
        let file = try #require(value as? [String: Any], "not a File: \(String(describing: value))")
        let text = try #require(file["url"] as? String)
        let url = try #require(URL(string: text))
        return try request("GET", url.path, appID: nil)
    }
}
