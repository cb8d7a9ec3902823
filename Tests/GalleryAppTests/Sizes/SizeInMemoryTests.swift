import Foundation
import GalleryTestSupport
import Imaging
import Testing

@testable import GalleryApp

/// A stored display size of at most `BucketRoutes.inMemoryBytes` is answered from its bytes in
/// memory, read once per open file (decision 059): the same answers as from the file (200, ranges,
/// 304, HEAD), and a larger size still from the file.
@Suite(.serialized) final class SizeInMemoryTests {
    let server: TestServer
    let photo: ReadyPhoto

    init() throws {
        server = try TestServer(workers: 1, listening: true) { $0.sizeCacheBytes = 1 << 30 }
        photo = try ReadyPhoto(on: server, width: 1600, height: 1200, seed: 91)
    }

    deinit { server.stop() }

    func path(_ size: DisplaySize) -> String { "/bucket/sizes/\(photo.id)/\(size.rawValue).jpg" }

    /// The size's file in the store.
    func file(_ size: DisplaySize) -> String { server.storage + "/sizes/\(photo.id)/\(size.rawValue).jpg" }

    /// Writes `count` bytes over the start of `path` in place (the store never does: it renames).
    func overwrite(_ path: String, count: Int) throws {
        let handle = try #require(FileHandle(forWritingAtPath: path))
        handle.write(Data(repeating: 0xAB, count: count))
        try handle.close()
    }

    @Test func smallWarmSize_IsAnsweredFromTheBytesReadOnce_WithRangesHeadAnd304AsFromTheFile() throws {
        let first = try photo.get(path(.s))  // renders
        #expect(first.status == 200)
        let stored = try [UInt8](Data(contentsOf: URL(fileURLWithPath: file(.s))))
        #expect(stored.count <= BucketRoutes.inMemoryBytes && [UInt8](first.body) == stored)
        let warm = try photo.get(path(.s))  // from the open file: its bytes are read now
        #expect([UInt8](warm.body) == stored)
        #expect(warm.header("Content-Length") == "\(stored.count)" && warm.header("Content-Type") == "image/jpeg")
        let etag = try #require(warm.header("ETag"))
        #expect(warm.header("Content-Encoding") == nil)
        // Changed in place behind the store's back: the bytes in memory are what is sent.
        try overwrite(file(.s), count: 16)
        #expect([UInt8](try photo.get(path(.s)).body) == stored)
        let n = stored.count
        for (range, slice) in [("bytes=0-9", 0..<10), ("bytes=100-199", 100..<200), ("bytes=-50", n - 50..<n)] {
            let partial = try photo.get(path(.s), headers: ["Range": range])
            #expect(partial.status == 206 && [UInt8](partial.body) == Array(stored[slice]), "\(range)")
            #expect(partial.header("Content-Range") == "bytes \(slice.lowerBound)-\(slice.upperBound - 1)/\(n)")
        }
        #expect(try photo.get(path(.s), headers: ["Range": "bytes=\(n)-"]).status == 416)
        #expect(try photo.get(path(.s), headers: ["If-None-Match": etag]).status == 304)
        let head = try RawHTTPClient.exchange(
            port: server.application.port,
            head: "HEAD \(path(.s)) HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        #expect(head.status == 200 && head.body.isEmpty && head.header("Content-Length") == "\(n)")
        #expect(head.header("ETag") == etag)
    }

    @Test func largeWarmSize_IsStillSentFromTheFile() throws {
        #expect(try photo.get(path(.b)).status == 200)  // renders the 1024 px size
        let stored = try [UInt8](Data(contentsOf: URL(fileURLWithPath: file(.b))))
        #expect(stored.count > BucketRoutes.inMemoryBytes)
        #expect([UInt8](try photo.get(path(.b)).body) == stored)
        // Changed in place: a file body sends what the file holds now.
        try overwrite(file(.b), count: 16)
        let changed = [UInt8](try photo.get(path(.b)).body)
        #expect(changed.count == stored.count && changed.prefix(16).allSatisfy { $0 == 0xAB })
    }
}
