import Foundation
import GalleryTestSupport
import Synchronization
import Testing

@testable import HTTPServer

/// `HTTPResponseBody.stream`: bytes go out as a producer writes them, the producer waits while the
/// client does not read, and either side failing ends the other.
private final class Producer: Sendable {
    let stream: HTTPBodyStream
    private let cancelledFlag = Atomic(false)
    private let doneFlag = Atomic(false)

    init(capacity: Int) { stream = HTTPBodyStream(capacity: capacity) }

    /// Whether a write threw `Cancelled`.
    var cancelled: Bool { cancelledFlag.load(ordering: .relaxed) }
    /// Whether the producing thread has returned.
    var done: Bool { doneFlag.load(ordering: .relaxed) }

    /// Writes `total` bytes (byte i is i % 251) in `chunk`-sized pieces on its own thread, then
    /// finishes, or fails after `failAfter` bytes, or stops `short` bytes early.
    func start(total: Int, chunk: Int = 16 * 1024, failAfter: Int? = nil, short: Int = 0, pause: Double = 0) {
        Thread.detachNewThread { [self] in
            defer { doneFlag.store(true, ordering: .relaxed) }
            var sent = 0
            let end = total - short
            while sent < end {
                if let failAfter, sent >= failAfter {
                    stream.fail("injected failure")
                    return
                }
                let n = min(chunk, end - sent)
                let bytes = (sent..<sent + n).map { UInt8($0 % 251) }
                do {
                    try bytes.withUnsafeBytes { try stream.write($0) }
                } catch {
                    cancelledFlag.store(error is HTTPBodyStream.Cancelled, ordering: .relaxed)
                    return
                }
                sent += n
                if pause > 0 { Thread.sleep(forTimeInterval: pause) }
            }
            stream.finish()
        }
    }

    /// Waits up to 10 s for `condition`.
    func waitFor(_ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if condition() { return true }
            Thread.sleep(forTimeInterval: 0.02)
        }
        return condition()
    }
}

private func expected(_ range: Range<Int>) -> [UInt8] { range.map { UInt8($0 % 251) } }

/// A route answering each request with a fresh producer's stream of `total` bytes.
private final class StreamRoute: Sendable {
    private let made = Mutex<[Producer]>([])
    var producers: [Producer] { made.withLock { $0 } }

    func register(
        _ router: HTTPRouter, total: Int, capacity: Int = 64 * 1024, failAfter: Int? = nil, short: Int = 0,
        pause: Double = 0
    ) {
        router.add(
            HTTPRoute(.get, "/stream", mayBlock: true) { [self] _ in
                let producer = Producer(capacity: capacity)
                made.withLock { $0.append(producer) }
                producer.start(total: total, failAfter: failAfter, short: short, pause: pause)
                return HTTPResponse(
                    status: .ok, headers: ["Content-Type": "application/octet-stream"],
                    body: .stream(producer.stream, length: total))
            })
    }
}

@Test(arguments: HTTPIOBackend.available)
func streamBody_SendsWhatTheProducerWrites_AndKeepsTheConnection(backend: HTTPIOBackend) throws {
    let route = StreamRoute()
    try withServer(backend: backend, routes: { route.register($0, total: 300_000, pause: 0.005) }) { server in
        let client = try RawClient(port: server.port)
        for _ in 0..<2 {
            client.send(get("/stream"))
            let response = try client.readResponse()
            #expect(response.status == 200)
            #expect(response.headers["Content-Length"] == "300000")
            #expect(response.body.count == 300_000)
            #expect(response.body == expected(0..<300_000), "the body differs")
        }
        #expect(route.producers.count == 2)
        #expect(route.producers.allSatisfy { $0.done && !$0.cancelled })
    }
}

@Test(arguments: HTTPIOBackend.available)
func streamBody_ProducerWaits_WhileTheClientDoesNotRead_AndIsCancelledWhenItGoes(backend: HTTPIOBackend) throws {
    let route = StreamRoute()
    let total = 64 << 20
    try withServer(backend: backend, routes: { route.register($0, total: total) }) { server in
        do {
            let client = try RawClient(port: server.port, receiveBuffer: 16 * 1024)
            client.send(get("/stream"))
            let head = try client.readHead()
            #expect(head.status == 200)
            #expect(try client.readBytes(1000) == expected(0..<1000), "the first bytes differ")
            let producer = try #require(route.producers.first)
            // The producer comes to a stop: nothing written for half a second.
            var written = producer.stream.bytesWritten
            let stopped = producer.waitFor {
                Thread.sleep(forTimeInterval: 0.5)
                defer { written = producer.stream.bytesWritten }
                return producer.stream.bytesWritten == written
            }
            #expect(stopped, "the producer kept writing while nobody read")
            // The stream's 64 KiB and the kernel's socket buffers, not the 64 MiB.
            #expect(written < 8 << 20, "\(written) bytes written for a client that read 1000")
            #expect(producer.stream.bytesBuffered <= 64 * 1024 + 16 * 1024)
            #expect(!producer.done)
            var reset = linger(l_onoff: 1, l_linger: 0)
            setsockopt(client.fd, SOL_SOCKET, SO_LINGER, &reset, socklen_t(MemoryLayout<linger>.size))
        }
        // The client is gone (released: closed with a reset); the producer's next write throws.
        let producer = try #require(route.producers.first)
        #expect(producer.waitFor { producer.done })
        #expect(producer.cancelled)
    }
}

@Test(arguments: HTTPIOBackend.available)
func streamBody_ProducerFailingMidBody_ClosesTheConnection(backend: HTTPIOBackend) throws {
    let route = StreamRoute()
    try withServer(backend: backend, routes: { route.register($0, total: 1_000_000, failAfter: 6 * 16 * 1024) }) {
        server in
        let client = try RawClient(port: server.port, receiveTimeout: 10)
        client.send(get("/stream"))
        let head = try client.readHead()
        #expect(head.headers["Content-Length"] == "1000000")
        let (bytes, closed) = client.readUntilClosed()
        #expect(closed)
        #expect(bytes.count == 6 * 16 * 1024)
        #expect(bytes == expected(0..<bytes.count), "the bytes before the failure differ")
    }
}

@Test(arguments: HTTPIOBackend.available)
func streamBody_EndingShortOfItsLength_ClosesTheConnection(backend: HTTPIOBackend) throws {
    let route = StreamRoute()
    try withServer(backend: backend, routes: { route.register($0, total: 50_000, short: 10) }) { server in
        let client = try RawClient(port: server.port, receiveTimeout: 10)
        client.send(get("/stream"))
        _ = try client.readHead()
        let (bytes, closed) = client.readUntilClosed()
        #expect(closed)
        #expect(bytes.count == 49_990)
        #expect(bytes == expected(0..<bytes.count), "the bytes sent differ")
    }
}

@Test(arguments: HTTPIOBackend.available)
func streamBody_HEAD_AnnouncesTheLength_AndCancelsTheProducer(backend: HTTPIOBackend) throws {
    let route = StreamRoute()
    try withServer(backend: backend, routes: { route.register($0, total: 10 << 20, capacity: 16 * 1024) }) { server in
        let client = try RawClient(port: server.port)
        client.send("HEAD /stream HTTP/1.1\r\nHost: test\r\n\r\n")
        let response = try client.readResponse(bodyless: true)
        #expect(response.status == 200)
        #expect(response.headers["Content-Length"] == String(10 << 20))
        let producer = try #require(route.producers.first)
        #expect(producer.waitFor { producer.done })
        #expect(producer.cancelled)
        // The connection goes on with the next request.
        client.send("HEAD /stream HTTP/1.1\r\nHost: test\r\n\r\n")
        #expect(try client.readResponse(bodyless: true).status == 200)
    }
}

@Test func bodyStream_WriteThrowsCancelled_OnceTheConsumerCancels_EvenWhileWaiting() throws {
    let stream = HTTPBodyStream(capacity: 4)
    let bytes: [UInt8] = [1, 2, 3, 4]
    try bytes.withUnsafeBytes { try stream.write($0) }
    let finished = DispatchSemaphore(value: 0)
    nonisolated(unsafe) var thrown: Error?
    Thread.detachNewThread {
        do { try bytes.withUnsafeBytes { try stream.write($0) } } catch { thrown = error }
        finished.signal()
    }
    // The second write waits: the buffer is full.
    #expect(finished.wait(timeout: .now() + 0.3) == .timedOut)
    stream.cancel()
    #expect(finished.wait(timeout: .now() + 5) == .success)
    #expect(thrown is HTTPBodyStream.Cancelled)
    #expect(throws: HTTPBodyStream.Cancelled.self) { try bytes.withUnsafeBytes { try stream.write($0) } }
}
