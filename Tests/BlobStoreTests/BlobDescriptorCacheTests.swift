import Foundation
import Testing

@testable import BlobStore

/// A store with an open-file cache in a fresh temporary directory, removed by the caller.
private func makeCachedStore(entries: Int = 8) throws -> (LocalBlobStore, String) {
    let root = NSTemporaryDirectory() + "blobcache-test-" + UUID().uuidString
    return (try LocalBlobStore(root: root, openFileCacheEntries: entries), root)
}

/// Reads a whole blob from a descriptor with explicit offsets (as sendfile does), then closes it.
private func readAll(_ blob: LocalBlobStore.OpenBlob) -> [UInt8] {
    defer { close(blob.fd) }
    var bytes = [UInt8](repeating: 0, count: Int(blob.info.size))
    let n = bytes.withUnsafeMutableBytes { pread(blob.fd, $0.baseAddress, $0.count, 0) }
    return Array(bytes.prefix(max(0, n)))
}

/// This process's descriptors of files inside `root`, not the root directory the store keeps open
/// (other tests open files meanwhile, so only the store's own are counted).
/// Open descriptors of blobs under `root`; the store's own temporary-directory lock (`.tmp/…/.lock`,
/// held while the store lives) is not a blob and is left out.
private func descriptors(under root: String) -> Int {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
    return names.filter { name in
        guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + name) else {
            return false
        }
        return target.hasPrefix(root + "/") && !target.hasPrefix(root + "/.tmp/")
    }.count
}

@Test func openFileCache_AnswersRepeatedReads_FromTheCachedDescriptor() throws {
    let (store, root) = try makeCachedStore()
    defer { try? FileManager.default.removeItem(atPath: root) }
    let key = try BlobKey("thumbnails/a.jpg")
    try store.put(key, bytes: [1, 2, 3])
    let first = try #require(try store.openForReading(key))
    #expect(readAll(first) == [1, 2, 3])
    #expect(store.openFileCacheHits == 0)
    for _ in 0..<3 {
        let again = try #require(try store.openForReading(key))
        #expect(again.info == first.info)
        #expect(readAll(again) == [1, 2, 3])
    }
    #expect(store.openFileCacheHits == 3)
}

@Test func openFileCache_ForgetsABlob_AtOnceWhenDeletedOrReplaced() throws {
    let (store, root) = try makeCachedStore()
    defer { try? FileManager.default.removeItem(atPath: root) }
    let key = try BlobKey("previews/b.jpg")
    try store.put(key, bytes: [1, 2, 3])
    _ = readAll(try #require(try store.openForReading(key)))
    _ = readAll(try #require(try store.openForReading(key)))
    try store.put(key, bytes: [4, 5, 6, 7])
    #expect(readAll(try #require(try store.openForReading(key))) == [4, 5, 6, 7])
    #expect(try store.delete(key))
    #expect(try store.openForReading(key) == nil)
    #expect(store.openFileCacheCount == 0)
}

@Test func openFileCache_NoticesADeleteByAnotherProcess_AfterRevalidating() throws {
    let (store, root) = try makeCachedStore()
    defer { try? FileManager.default.removeItem(atPath: root) }
    let key = try BlobKey("thumbnails/c.jpg")
    try store.put(key, bytes: [9])
    _ = readAll(try #require(try store.openForReading(key)))
    // Unlinked behind the store's back (a separate `galleryd worker`): found out within a second.
    #expect(unlink(store.path(for: key)) == 0)
    usleep(1_100_000)
    #expect(try store.openForReading(key) == nil)
}

@Test func openFileCache_HoldsAtMostItsCapacity_AndClosesEverythingWithTheStore() throws {
    let root: String
    do {
        let (store, storeRoot) = try makeCachedStore(entries: 8)
        root = storeRoot
        var keys: [BlobKey] = []
        for i in 0..<20 {
            let key = try BlobKey("thumbnails/\(i).jpg")
            try store.put(key, bytes: [UInt8(i)])
            keys.append(key)
        }
        #expect(descriptors(under: root) == 0)
        for _ in 0..<3 {
            for (i, key) in keys.enumerated() {
                #expect(readAll(try #require(try store.openForReading(key))) == [UInt8(i)])
            }
        }
        // Only the cache's own descriptors stay open: every reader closed its duplicate.
        #expect(store.openFileCacheCount <= 8)
        #expect(descriptors(under: root) == store.openFileCacheCount)
        #expect(store.openFileCacheCount > 0)
    }
    #expect(descriptors(under: root) == 0)
    try? FileManager.default.removeItem(atPath: root)
}

@Test func openShared_AnswersHitsWithTheSameOpenFile_AndOpensNothingMore() throws {
    let (store, root) = try makeCachedStore()
    defer { try? FileManager.default.removeItem(atPath: root) }
    let key = try BlobKey("thumbnails/s.jpg")
    try store.put(key, bytes: [1, 2, 3, 4])
    let first = try #require(try store.openShared(key))
    #expect(descriptors(under: root) == 1)
    for _ in 0..<3 {
        let again = try #require(try store.openShared(key))
        #expect(again === first)
        #expect(again.info == first.info)
        var bytes = [UInt8](repeating: 0, count: 4)
        #expect(bytes.withUnsafeMutableBytes { pread(again.fd, $0.baseAddress, $0.count, 0) } == 4)
        #expect(bytes == [1, 2, 3, 4])
    }
    #expect(descriptors(under: root) == 1)
    #expect(store.openFileCacheHits == 3)
    #expect(first.lastModified.hasSuffix(" GMT") && first.lastModified.count == 29)
}

/// Key text not validated yet: refused as `BlobKey` refuses it, before and after its blob is
/// cached (a hit skips the validation only for a key the cache took in, hence valid), with or
/// without the cache; nil when absent; the cached file on a hit.
@Test func openSharedValidating_RefusesInvalidKeys_AndAnswersHitsWithTheCachedFile() throws {
    let (store, root) = try makeCachedStore()
    defer { try? FileManager.default.removeItem(atPath: root) }
    let uncachedRoot = root + "-uncached"
    let uncached = try LocalBlobStore(root: uncachedRoot)
    defer { try? FileManager.default.removeItem(atPath: uncachedRoot) }
    let key = try BlobKey("thumbnails/v.jpg")
    for blobs in [store, uncached] {
        try blobs.put(key, bytes: [1, 2])
        #expect(try blobs.openShared(validating: "thumbnails/none.jpg") == nil)
        for _ in 0..<2 {
            let opened = try #require(try blobs.openShared(validating: "thumbnails/v.jpg"))
            #expect(opened.key == key && opened.file.info.size == 2)
            for invalid in ["../thumbnails/v.jpg", "/thumbnails/v.jpg", "thumbnails//v.jpg", "thumbnails/.v", ""] {
                #expect(throws: BlobStoreError.self) { try blobs.openShared(validating: invalid) }
            }
        }
    }
    let first = try #require(try store.openShared(validating: "thumbnails/v.jpg"))
    #expect(first.file === (try store.openShared(key)))
    #expect(store.openFileCacheHits == 3)
}

@Test func openShared_KeepsAFileBeingSent_AfterItsDelete_AndClosesItWithTheLastReader() throws {
    let (store, root) = try makeCachedStore()
    defer { try? FileManager.default.removeItem(atPath: root) }
    let key = try BlobKey("previews/d.jpg")
    try store.put(key, bytes: [7, 8, 9])
    var inFlight = try store.openShared(key)
    #expect(try store.delete(key))
    // A new request is a 404 at once; the response already sending finishes from its descriptor.
    #expect(try store.openShared(key) == nil)
    #expect(store.openFileCacheCount == 0)
    var bytes = [UInt8](repeating: 0, count: 3)
    #expect(bytes.withUnsafeMutableBytes { pread(inFlight!.fd, $0.baseAddress, $0.count, 0) } == 3)
    #expect(bytes == [7, 8, 9])
    inFlight = nil
    #expect(descriptors(under: root) == 0)
}

@Test func openShared_WithoutTheCache_ClosesWhenTheReaderLetsGo() throws {
    let root = NSTemporaryDirectory() + "blobcache-test-" + UUID().uuidString
    defer { try? FileManager.default.removeItem(atPath: root) }
    let store = try LocalBlobStore(root: root)
    let key = try BlobKey("thumbnails/n.jpg")
    try store.put(key, bytes: [5])
    do {
        let file = try #require(try store.openShared(key))
        withExtendedLifetime(file) {
            #expect(file.info.size == 1)
            #expect(descriptors(under: root) == 1)
        }
    }
    #expect(descriptors(under: root) == 0)
    #expect(try store.openShared(try BlobKey("thumbnails/missing.jpg")) == nil)
}

@Test func openFileCache_AnswersAKeyGivenAsBytes_WithTheTextItHolds() throws {
    let (store, root) = try makeCachedStore()
    defer { try? FileManager.default.removeItem(atPath: root) }
    let key = try BlobKey("thumbnails/a.jpg")
    try store.put(key, bytes: [1, 2, 3])
    let path = Array("/bucket/thumbnails/a.jpg".utf8)
    try path.withUnsafeBufferPointer { path in
        try HashedKey.probe(UnsafeBufferPointer(rebasing: path[8...])) { probe in
            // A miss opens the file (and caches it), as the String form does.
            let first = try #require(try store.openShared(validating: probe))
            #expect(first.key == key)
            #expect(store.openFileCacheHits == 0)
            let again = try #require(try store.openShared(validating: probe))
            #expect(again.key == key && again.file === first.file)
            #expect(store.openFileCacheHits == 1)
        }
        // Not stored, or not a valid key: nil, or refused as `BlobKey(_:)` refuses it.
        try HashedKey.probe(UnsafeBufferPointer(rebasing: path[8..<20])) { probe throws in
            let opened = try store.openShared(validating: probe)
            #expect(opened == nil)
        }
        HashedKey.probe(UnsafeBufferPointer(rebasing: path[0...])) { probe in
            #expect(throws: BlobStoreError.self) { try store.openShared(validating: probe) }
        }
    }
}
