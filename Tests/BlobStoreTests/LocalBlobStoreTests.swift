import Foundation
import Testing

@testable import BlobStore

/// A fresh store in its own temporary directory, removed by the caller.
private func makeStore() throws -> (LocalBlobStore, String) {
    let root = NSTemporaryDirectory() + "blobstore-test-" + UUID().uuidString
    return (try LocalBlobStore(root: root), root)
}

@Test func blobKey_RejectsKeys_ThatCouldEscapeTheRoot() {
    for bad in [
        "", "/etc/passwd", "../x", "a/../../b", "a//b", "a/./b", "a/", ".hidden", "a/.tmp/x",
        "a\u{0}b", "thumbnails/x y.jpg", "a\\b", "%2e%2e/x", String(repeating: "a", count: 1025),
    ] {
        #expect(throws: BlobStoreError.self, "\(bad.debugDescription) must be refused") { try BlobKey(bad) }
    }
}

@Test func blobKey_AcceptsTheKeysTheAppUses() throws {
    #expect(try BlobKey.thumbnail(objectId: "Ab3dE5fG7h").rawValue == "thumbnails/Ab3dE5fG7h.jpg")
    #expect(
        try BlobKey.original(sha256: String(repeating: "ab", count: 32)).lastComponent == String(
            repeating: "ab", count: 32) + ".jpg")
    #expect(try BlobKey("a-b_c.d/e").rawValue == "a-b_c.d/e")
}

@Test func put_StoresBytes_AndLeavesNoTemporaryFiles() throws {
    let (store, root) = try makeStore()
    defer { try? FileManager.default.removeItem(atPath: root) }
    let key = try BlobKey("previews/abc.jpg")
    let info = try store.put(key, bytes: Array("hello".utf8))
    #expect(info.size == 5)
    #expect(try Data(contentsOf: URL(fileURLWithPath: store.path(for: key))) == Data("hello".utf8))
    #expect(try FileManager.default.contentsOfDirectory(atPath: store.spoolDirectory).isEmpty)
    #expect(store.bytesWritten == 5)
}

@Test func put_MovesAFile_AndReplacesAnEarlierBlob() throws {
    let (store, root) = try makeStore()
    defer { try? FileManager.default.removeItem(atPath: root) }
    let key = try BlobKey("originals/x.jpg")
    try store.put(key, bytes: [1, 2, 3])
    let before = try #require(try store.info(key))
    let source = store.spoolDirectory + "/upload"
    try Data(repeating: 7, count: 100_000).write(to: URL(fileURLWithPath: source))
    let after = try store.put(key, movingFileAt: source)
    #expect(after.size == 100_000)
    #expect(after.etag != before.etag)
    #expect(!FileManager.default.fileExists(atPath: source))
    #expect(try store.localPath(key) == store.path(for: key))
}

@Test func put_CopiesAFile_FromAnotherDirectory() throws {
    let (store, root) = try makeStore()
    defer { try? FileManager.default.removeItem(atPath: root) }
    let source = NSTemporaryDirectory() + "blob-src-" + UUID().uuidString
    try Data([9, 8, 7]).write(to: URL(fileURLWithPath: source))
    let key = try BlobKey("a/b/c.bin")
    try store.put(key, movingFileAt: source)
    #expect(try store.info(key)?.size == 3)
}

@Test func delete_RemovesTheBlob_AndMissingIsNotAnError() throws {
    let (store, root) = try makeStore()
    defer { try? FileManager.default.removeItem(atPath: root) }
    let key = try BlobKey("thumbnails/gone.jpg")
    try store.put(key, bytes: [0])
    #expect(try store.delete(key))
    #expect(try store.info(key) == nil)
    #expect(try store.localPath(key) == nil)
    #expect(try store.delete(key) == false)
}

@Test func put_ConcurrentWritersToOneKey_LeaveOneCompleteValue() throws {
    let (store, root) = try makeStore()
    defer { try? FileManager.default.removeItem(atPath: root) }
    let key = try BlobKey("race/k")
    DispatchQueue.concurrentPerform(iterations: 16) { i in
        _ = try? store.put(key, bytes: [UInt8](repeating: UInt8(i), count: 65_536))
    }
    let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: store.path(for: key))))
    #expect(bytes.count == 65_536)
    #expect(Set(bytes).count == 1, "a blob must hold exactly one writer's bytes")
}

@Test func openForReading_GivesTheBytesAndTheValidatorsOfThatFile() throws {
    let (store, root) = try makeStore()
    defer { try? FileManager.default.removeItem(atPath: root) }
    let key = try BlobKey("thumbnails/abc.jpg")
    let bytes = (0..<5000).map { UInt8(truncatingIfNeeded: $0) }
    try store.put(key, bytes: bytes)
    let blob = try #require(try store.openForReading(key))
    defer { close(blob.fd) }
    var read = [UInt8](repeating: 0, count: 6000)
    #expect(read.withUnsafeMutableBytes { Glibc.read(blob.fd, $0.baseAddress, $0.count) } == 5000)
    #expect(Array(read[..<5000]) == bytes)
    // The ETag is "<mtime in ns, hex>-<size, hex>" of the file, the same as `info` reports.
    var st = stat()
    #expect(stat(store.path(for: key), &st) == 0)
    let nanoseconds = Int64(st.st_mtim.tv_sec) * 1_000_000_000 + Int64(st.st_mtim.tv_nsec)
    #expect(blob.info.etag == "\"" + String(nanoseconds, radix: 16) + "-1388\"")
    #expect(blob.info == (try store.info(key)))
    #expect(blob.info.size == 5000)
}

@Test func openForReading_IsNil_ForMissingKeysAndDirectories() throws {
    let (store, root) = try makeStore()
    defer { try? FileManager.default.removeItem(atPath: root) }
    try store.put(try BlobKey("thumbnails/abc.jpg"), bytes: [1])
    #expect(try store.openForReading(try BlobKey("thumbnails/missing.jpg")) == nil)
    #expect(try store.openForReading(try BlobKey("thumbnails")) == nil)
    #expect(try store.openForReading(try BlobKey("thumbnails/abc.jpg/x")) == nil)
    // A FIFO in the store must not block the reader.
    #expect(mkfifo(root + "/thumbnails/fifo.jpg", 0o644) == 0)
    #expect(try store.openForReading(try BlobKey("thumbnails/fifo.jpg")) == nil)
}

@Test func openForReading_FollowsTheRoot_WhenAnotherDirectoryIsPutInItsPlace() throws {
    let (store, root) = try makeStore()
    defer {
        try? FileManager.default.removeItem(atPath: root)
        try? FileManager.default.removeItem(atPath: root + ".before")
    }
    let old = try BlobKey("thumbnails/old.jpg")
    try store.put(old, bytes: [1, 2, 3])
    #expect(try store.openForReading(old).map { close($0.fd) } != nil)
    // What mounting a volume over the storage directory after start looks like to the process.
    #expect(rename(root, root + ".before") == 0)
    let replacement = try LocalBlobStore(root: root)
    let new = try BlobKey("thumbnails/new.jpg")
    try replacement.put(new, bytes: [4, 5])
    let blob = try #require(try store.openForReading(new))
    close(blob.fd)
    #expect(blob.info.size == 2)
    // The old directory's keys are gone with it.
    #expect(try store.openForReading(old) == nil)
}

@Test func sweepTemporaryFiles_RemovesAllThatAGoneStoreLeft_ButOnlyStaleFilesOfALiveOne() throws {
    let (store, root) = try makeStore()
    defer { try? FileManager.default.removeItem(atPath: root) }
    // Another store on the same directory: another process, or another machine sharing it.
    var other: LocalBlobStore? = try LocalBlobStore(root: root)
    let spool = try #require(other?.spoolDirectory)
    #expect(spool != store.spoolDirectory)
    let writing = spool + "/upload-writing"
    let stale = spool + "/upload-stale"
    #expect(FileManager.default.createFile(atPath: writing, contents: Data("in progress".utf8)))
    #expect(FileManager.default.createFile(atPath: stale, contents: Data("client gone".utf8)))
    try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-7200)], ofItemAtPath: stale)
    // A loose file in .tmp (an older layout) follows the age rule too.
    let loose = root + "/.tmp/galleryd-body-old"
    #expect(FileManager.default.createFile(atPath: loose, contents: Data("old".utf8)))
    try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-7200)], ofItemAtPath: loose)

    // Its owner alive: only what nobody wrote to for the age goes.
    #expect(store.sweepTemporaryFiles(olderThan: 3600) == 2)
    #expect(FileManager.default.fileExists(atPath: writing))
    #expect(!FileManager.default.fileExists(atPath: stale) && !FileManager.default.fileExists(atPath: loose))

    // Its owner gone (a kill -9 releases the lock as this does): everything it left, however fresh,
    // and its directory.
    other = nil
    #expect(store.sweepTemporaryFiles(olderThan: 3600) == 1)
    #expect(!FileManager.default.fileExists(atPath: spool))
    // This store's own files and directory are untouched, and it keeps working.
    let mine = try store.writeTemporaryFile([1, 2, 3])
    #expect(store.sweepTemporaryFiles(olderThan: 3600) == 0)
    #expect(FileManager.default.fileExists(atPath: mine))
    try store.put(try BlobKey("a/b.bin"), movingFileAt: mine)
    #expect(
        try FileManager.default.contentsOfDirectory(atPath: root + "/.tmp").sorted()
            == [
                (store.spoolDirectory as NSString).lastPathComponent,
                (store.spoolDirectory as NSString).lastPathComponent + ".lock",
            ].sorted())
}
