import Foundation
import Testing

@testable import HTTPServer

/// A connected pair of local stream sockets: `server` non-blocking with a small send buffer (what
/// the writer writes to), `client` blocking (what a test reads from).
private final class SocketPair {
    let server: Int32
    let client: Int32
    private var open = true

    init(sendBuffer: Int32 = 16 * 1024) throws {
        var fds: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0 else {
            throw SocketError.socketFailed("socketpair")
        }
        server = fds[0]
        client = fds[1]
        var size = sendBuffer
        setsockopt(server, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        _ = fcntl(server, F_SETFL, fcntl(server, F_GETFL) | O_NONBLOCK)
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Reads what is there (blocking until something is), up to `limit` bytes.
    func read(limit: Int = 1 << 20) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: limit)
        let n = recv(client, &bytes, limit, 0)
        return n > 0 ? Array(bytes[..<n]) : []
    }

    func closeClient() {
        if open { close(client) }
        open = false
    }

    deinit {
        close(server)
        if open { close(client) }
    }
}

private func pattern(_ count: Int) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 9) } }

@Test
func writer_SendsHeadAndBodyInOneGatheredWrite() throws {
    let pair = try SocketPair(sendBuffer: 256 * 1024)
    var writer = HTTPResponseWriter()
    writer.begin()
    writer.head = Array("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n".utf8)
    writer.setBody(Array("hello".utf8))
    let (outcome, written) = writer.flush(to: pair.server)
    #expect(outcome == .done)
    #expect(written == writer.head.count + 5)
    #expect(writer.bytesWritten == written)
    #expect(String(decoding: pair.read(), as: UTF8.self) == "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello")
}

@Test
func writer_StopsOnAFullSendBuffer_AndContinuesWhereItStopped() throws {
    let pair = try SocketPair()
    let head = Array("HTTP/1.1 200 OK\r\nContent-Length: 3000000\r\n\r\n".utf8)
    let body = pattern(3_000_000)
    var writer = HTTPResponseWriter()
    writer.begin()
    writer.head = head
    writer.setBody(body)
    var received: [UInt8] = []
    var blocked = 0
    var total = 0
    while true {
        let (outcome, written) = writer.flush(to: pair.server)
        total += written
        if outcome == .done { break }
        #expect(outcome == .blocked)
        blocked += 1
        received += pair.read()
    }
    while received.count < head.count + body.count {
        let more = pair.read()
        if more.isEmpty { break }
        received += more
    }
    #expect(blocked > 0)  // 3 MB cannot fit a 16 KiB send buffer
    #expect(total == head.count + body.count)
    #expect(writer.bytesWritten == total)
    #expect(received == head + body)
}

@Test
func writer_SendsAFileRangeAfterTheHead_AndClosesItsDescriptorAtTheEnd() throws {
    let path = NSTemporaryDirectory() + "galleryd-writer-\(UInt32.random(in: 0...UInt32.max))"
    let bytes = pattern(200_000)
    try Data(bytes).write(to: URL(fileURLWithPath: path))
    defer { unlink(path) }
    let pair = try SocketPair()
    var writer = HTTPResponseWriter()
    writer.begin()
    #expect(writer.takeFile(of: .file(path: path, offset: 1000, length: 150_000), sendsBody: true) == nil)
    writer.head = Array("HTTP/1.1 206 Partial Content\r\n\r\n".utf8)
    var received: [UInt8] = []
    while true {
        let (outcome, _) = writer.flush(to: pair.server)
        if outcome == .done { break }
        #expect(outcome == .blocked)
        received += pair.read()
    }
    while received.count < writer.bytesWritten {
        let more = pair.read()
        if more.isEmpty { break }
        received += more
    }
    let headCount = writer.head.count
    #expect(writer.bytesWritten == headCount + 150_000)
    #expect(Array(received[headCount...]) == Array(bytes[1000..<151_000]))
    writer.finish()
    #expect(openDescriptorCount(on: path) == 0)
}

@Test
func writer_ReportsAFileShorterThanAnnounced() throws {
    let path = NSTemporaryDirectory() + "galleryd-writer-short-\(UInt32.random(in: 0...UInt32.max))"
    try Data(pattern(10)).write(to: URL(fileURLWithPath: path))
    defer { unlink(path) }
    let pair = try SocketPair(sendBuffer: 256 * 1024)
    var writer = HTTPResponseWriter()
    writer.begin()
    #expect(writer.takeFile(of: .file(path: path, offset: 0, length: 100), sendsBody: true) == nil)
    writer.head = Array("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n".utf8)
    let (outcome, written) = writer.flush(to: pair.server)
    #expect(outcome == .fileEndedEarly)
    #expect(written == writer.head.count + 10)
    writer.finish()
}

@Test
func writer_ReportsAVanishedClient() throws {
    let pair = try SocketPair()
    pair.closeClient()
    var writer = HTTPResponseWriter()
    writer.begin()
    writer.head = Array("HTTP/1.1 200 OK\r\n\r\n".utf8)
    let (outcome, written) = writer.flush(to: pair.server)
    #expect(outcome == .failed)  // EPIPE, without a SIGPIPE
    #expect(written == 0)
}

@Test
func writer_SaysWhatItCannotOpen_AndTakesDescriptorsEvenWithoutABody() throws {
    var writer = HTTPResponseWriter()
    writer.begin()
    let missing = "/nonexistent/galleryd-\(UInt32.random(in: 0...UInt32.max))"
    let unopened = writer.takeFile(of: .file(path: missing, offset: 0, length: 10), sendsBody: true)
    #expect(unopened?.hasPrefix(missing + ": ") == true)
    // A file body that is not sent (HEAD, 304) is not opened at all.
    #expect(writer.takeFile(of: .file(path: missing, offset: 0, length: 10), sendsBody: false) == nil)

    let path = NSTemporaryDirectory() + "galleryd-writer-fd-\(UInt32.random(in: 0...UInt32.max))"
    try Data(pattern(10)).write(to: URL(fileURLWithPath: path))
    defer { unlink(path) }
    let descriptor = HTTPFileDescriptor(owning: open(path, O_RDONLY | O_CLOEXEC))
    #expect(writer.takeFile(of: .descriptor(descriptor, offset: 0, length: 10), sendsBody: false) == nil)
    #expect(openDescriptorCount(on: path) == 1)  // now the writer's
    writer.finish()
    #expect(openDescriptorCount(on: path) == 0)
    // Taken once: a second response naming the same descriptor cannot send it.
    #expect(
        writer.takeFile(of: .descriptor(descriptor, offset: 0, length: 10), sendsBody: true)
            == "a descriptor already sent")
}

/// How many of this process's descriptors are open on `path`.
private func openDescriptorCount(on path: String) -> Int {
    guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") else { return -1 }
    return entries.filter {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + $0)) == path
    }.count
}

@Test
func writer_SendsFromASharedDescriptor_WithoutClosingIt_AsOftenAsAsked() throws {
    let path = NSTemporaryDirectory() + "galleryd-writer-shared-\(UInt32.random(in: 0...UInt32.max))"
    let bytes = pattern(3000)
    try Data(bytes).write(to: URL(fileURLWithPath: path))
    defer { unlink(path) }
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    #expect(fd >= 0)
    defer { close(fd) }
    // What an open-file cache does: one descriptor, its owner closes it, many responses send from it.
    final class Owner: Sendable {}
    let shared = HTTPFileDescriptor(sharing: fd, keptOpenBy: Owner())
    let pair = try SocketPair(sendBuffer: 64 * 1024)
    for offset in [0, 1000] {
        var writer = HTTPResponseWriter()
        writer.begin()
        #expect(writer.takeFile(of: .descriptor(shared, offset: offset, length: 2000), sendsBody: true) == nil)
        writer.head = Array("HTTP/1.1 200 OK\r\n\r\n".utf8)
        #expect(writer.flush(to: pair.server).outcome == .done)
        var received: [UInt8] = []
        while received.count < writer.bytesWritten {
            let more = pair.read()
            if more.isEmpty { break }
            received += more
        }
        #expect(Array(received.dropFirst(writer.head.count)) == Array(bytes[offset..<offset + 2000]))
        writer.finish()
        // Still open for the next response, and for its owner.
        #expect(openDescriptorCount(on: path) == 1)
        #expect(fcntl(fd, F_GETFD) >= 0)
    }
    // Dropping a response that never sent it does not close it either.
    var writer = HTTPResponseWriter()
    writer.begin()
    #expect(writer.takeFile(of: .descriptor(shared, offset: 0, length: 10), sendsBody: false) == nil)
    writer.closeFile()
    #expect(openDescriptorCount(on: path) == 1)
}
