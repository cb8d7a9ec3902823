import Foundation
import Testing

@testable import GalleryApp

/// The bucket route's open-file cache (issue #17): repeated reads come from cached descriptors,
/// and a blob deleted by a purge or by the orphan collector is a 404 at once, never served from
/// the cache.
@Suite struct HotBlobCacheTests {
    @Test func bucket_Is404AtOnce_AfterAPurgeOfACachedPhoto() throws {
        let server = try TestServer(workers: 0) { UploadTests.smallDerivatives(&$0) }
        defer { server.stop() }
        let id = try server.uploadPhoto(try TestJPEG.make(width: 80, height: 60, seed: 61))
        #expect(server.application.makeWorkerPool(threads: 1).drain() == 1)
        let paths = ["/bucket/thumbnails/\(id).jpg", "/bucket/previews/\(id).jpg"]
        let hitsBefore = server.application.store.openFileCacheHits
        for _ in 0..<3 {
            for path in paths { #expect(try server.request("GET", path, appID: nil).status == 200) }
        }
        #expect(server.application.store.openFileCacheHits >= hitsBefore + 4)
        #expect(try server.request("DELETE", "/parse/classes/Photo/\(id)").status == 200)
        #expect(try server.request("DELETE", "/parse/purge/Photo/\(id)").status == 200)
        for path in paths {
            let response = try server.request("GET", path, appID: nil)
            #expect(response.status == 404, "\(path)")
            #expect(response.text.contains("<Code>NoSuchKey</Code>"))
        }
    }

    @Test func bucket_Is404AtOnce_AfterTheOrphanCollectorRemovesACachedUpload() throws {
        let server = try TestServer(workers: 0) { UploadTests.smallDerivatives(&$0) }
        defer { server.stop() }
        let file = try server.request(
            "POST", "/parse/files/o.jpg", body: Data(try TestJPEG.make(width: 40, height: 30, seed: 62)),
            headers: ["Content-Type": "image/jpeg"])
        #expect(file.status == 201)
        let name = try #require(file.json["name"] as? String)
        let url = try #require(file.json["url"] as? String)
        let path = try #require(URL(string: url)).path
        for _ in 0..<3 { #expect(try server.request("GET", path, appID: nil).status == 200) }
        #expect(server.application.store.openFileCacheCount > 0)
        try server.application.pool.query(
            "update file_uploads set uploaded_at = now() - interval '25 hours' where checksum || '.jpg' = $1", [name])
        try server.application.pool.query(
            "update files set created_at = now() - interval '25 hours' where name = $1", [name])
        #expect(server.application.makeWorkerPool(threads: 1).collectOrphans().uploads == 1)
        #expect(try server.request("GET", path, appID: nil).status == 404)
    }

    /// A thumbnail of at most `BucketRoutes.inMemoryBytes` is sent from its bytes, read once per
    /// open file (decisions 059, 041): the same answers as from the file, ranges included.
    @Test func smallThumbnail_IsAnsweredFromTheBytesReadOnce() throws {
        let server = try TestServer(workers: 0) { UploadTests.smallDerivatives(&$0) }
        defer { server.stop() }
        let id = try server.uploadPhoto(try TestJPEG.make(width: 80, height: 60, seed: 63))
        #expect(server.application.makeWorkerPool(threads: 1).drain() == 1)
        let path = "/bucket/thumbnails/\(id).jpg"
        let file = server.storage + "/thumbnails/\(id).jpg"
        let stored = try [UInt8](Data(contentsOf: URL(fileURLWithPath: file)))
        #expect(stored.count > 20 && stored.count <= BucketRoutes.inMemoryBytes)
        let first = try server.request("GET", path, appID: nil)  // opens the file and reads its bytes
        #expect(first.status == 200 && [UInt8](first.body) == stored)
        #expect(first.header("Content-Length") == "\(stored.count)" && first.header("Content-Encoding") == nil)
        // Changed in place behind the store's back (it only ever renames): the bytes in memory are sent.
        let handle = try #require(FileHandle(forWritingAtPath: file))
        handle.write(Data(repeating: 0xAB, count: 16))
        try handle.close()
        #expect([UInt8](try server.request("GET", path, appID: nil).body) == stored)
        let partial = try server.request("GET", path, headers: ["Range": "bytes=2-11"], appID: nil)
        #expect(partial.status == 206 && [UInt8](partial.body) == Array(stored[2..<12]))
    }
}
