import Foundation
import Synchronization
import Testing

@testable import BlobStore

/// A small blob's bytes kept with its open descriptor (`BlobFile.contents(atMost:)`, decision 059):
/// read once, only up to the limit, and never when the read comes up short of `fstat`'s size.
@Suite struct BlobFileContentsTests {
    let root = NSTemporaryDirectory() + "blobfile-contents-test-" + UUID().uuidString
    let store: LocalBlobStore

    init() throws { store = try LocalBlobStore(root: root, openFileCacheEntries: 8) }

    /// Opens `bytes` stored under `key` through the open-file cache.
    func open(_ key: String, _ bytes: [UInt8]) throws -> BlobFile {
        _ = try store.put(BlobKey(key), bytes: bytes)
        return try #require(try store.openShared(BlobKey(key)))
    }

    @Test func contents_AreTheFilesBytes_ReadOnceAndKeptWithTheDescriptor() throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        let bytes = (0..<3000).map { UInt8(truncatingIfNeeded: $0 * 7) }
        let file = try open("sizes/p/s.jpg", bytes)
        #expect(file.contents(atMost: 4096) == bytes)
        // Written in place behind the store's back (it never does): the bytes read first stay.
        let handle = try #require(FileHandle(forWritingAtPath: root + "/sizes/p/s.jpg"))
        handle.write(Data(repeating: 0, count: 10))
        try handle.close()
        #expect(file.contents(atMost: 4096) == bytes)
        // The cache hands out the same object: its bytes too.
        #expect(try store.openShared(BlobKey("sizes/p/s.jpg"))?.contents(atMost: 4096) == bytes)
    }

    @Test func contents_ReadByManyReadersAtOnce_AreTheSameBytes() throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        let bytes = (0..<9000).map { UInt8(truncatingIfNeeded: $0 * 13) }
        let file = try open("sizes/p/z.jpg", bytes)
        let results = Mutex<[[UInt8]?]>(Array(repeating: nil, count: 16))
        DispatchQueue.concurrentPerform(iterations: 16) { i in
            let read = file.contents(atMost: 16 << 10)
            results.withLock { $0[i] = read }
        }
        #expect(results.withLock { $0 }.allSatisfy { $0 == bytes })
        #expect(file.contents(atMost: 16 << 10) == bytes)
    }

    @Test func contents_AreNil_AboveTheLimit_AndForAnEmptyLimit() throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        let file = try open("sizes/p/n.jpg", [UInt8](repeating: 1, count: 5000))
        #expect(file.contents(atMost: 4999) == nil)
        #expect(file.contents(atMost: 0) == nil)
        #expect(file.contents(atMost: 5000)?.count == 5000)
        let empty = try open("sizes/p/e.jpg", [])
        #expect(empty.contents(atMost: 0) == [])
    }

    @Test func contents_AreNil_WhenTheFileIsShorterThanItsStatus() throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        let file = try open("sizes/p/m.jpg", [UInt8](repeating: 2, count: 2000))
        // Cut after the open: `fstat` said 2,000 bytes, 100 are left.
        #expect(truncate(root + "/sizes/p/m.jpg", 100) == 0)
        #expect(file.contents(atMost: 4096) == nil)
        // Nothing was kept: the next reader reads again (and fails the same way).
        #expect(file.contents(atMost: 4096) == nil)
    }
}
