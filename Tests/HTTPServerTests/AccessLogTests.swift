import Foundation
import Testing

@testable import HTTPServer

/// A pipe the access log writes into; the test reads what arrived without blocking.
private final class LogPipe {
    let readFD: Int32
    let writeFD: Int32
    private var readOpen = true

    init(capacity: Int32? = nil) throws {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw POSIXError(.EMFILE) }
        readFD = fds[0]
        writeFD = fds[1]
        _ = fcntl(readFD, F_SETFL, fcntl(readFD, F_GETFL) | O_NONBLOCK)
        // 1031: F_SETPIPE_SZ.
        if let capacity { _ = fcntl(writeFD, 1031, capacity) }
    }

    deinit {
        closeRead()
        close(writeFD)
    }

    /// Everything written so far.
    func readAvailable() -> String {
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while readOpen {
            let n = read(readFD, &chunk, chunk.count)
            if n <= 0 { break }
            out.append(contentsOf: chunk[0..<n])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Closes the reading end: further writes fail with EPIPE.
    func closeRead() {
        if readOpen { close(readFD) }
        readOpen = false
    }
}

private func accessLogRoutes(_ router: HTTPRouter) {
    router.add(.get, "/items/:id", mayBlock: false) { request in .text("item \(request.pathParameters["id"] ?? "")") }
}

/// Runs `body` with a server on `backend` serving `accessLogRoutes`, whose access log, in `format`,
/// goes into `pipe` (`configure` sets the rest of the log), and a client connected to it.
private func withLoggingServer(
    backend: HTTPIOBackend = .platformDefault, format: HTTPAccessLogFormat, into pipe: LogPipe,
    configure: (inout HTTPAccessLogConfiguration) -> Void = { _ in },
    _ body: (HTTPServer, RawClient) throws -> Void
) throws {
    try withServer(
        backend: backend,
        configure: {
            $0.accessLog.format = format
            $0.accessLog.fileDescriptor = pipe.writeFD
            configure(&$0.accessLog)
        }, routes: accessLogRoutes
    ) { server in
        try body(server, try RawClient(port: server.port))
    }
}

@Test(arguments: HTTPIOBackend.available)
func accessLog_WritesTextLineWithFields(backend: HTTPIOBackend) throws {
    let pipe = try LogPipe()
    var requestID = ""
    try withLoggingServer(backend: backend, format: .text, into: pipe) { _, client in
        client.send(get("/items/7"))
        let response = try client.readResponse()
        #expect(response.status == 200)
        requestID = response.headers["X-Request-Id"] ?? "missing"
    }
    let lines = pipe.readAvailable().split(separator: "\n").map(String.init)
    #expect(lines.count == 1)
    let line = lines.first ?? ""
    // 2026-11-23T05:57:02Z 127.0.0.1:40312 "GET /items/7" 200 164 0.041ms <id>; bytes are all
    // bytes sent, head included (nginx's $bytes_sent).
    let fields = line.split(separator: " ").map(String.init)
    #expect(fields.count == 8)
    #expect(fields.first?.count == 20 && fields.first?.hasSuffix("Z") == true)
    #expect(fields.dropFirst().first?.hasPrefix("127.0.0.1:") == true)
    #expect(line.contains(" \"GET /items/7\" 200 "))
    #expect(Int(fields.dropFirst(5).first ?? "") ?? 0 > 6)
    #expect(fields.dropFirst(6).first?.hasSuffix("ms") == true)
    #expect(fields.last == requestID)
}

@Test(arguments: HTTPIOBackend.available)
func accessLog_WritesValidJSONLines_EscapingThePath(backend: HTTPIOBackend) throws {
    let pipe = try LogPipe()
    try withLoggingServer(backend: backend, format: .json, into: pipe) { _, client in
        for path in ["/items/1", "/items/a%22b%5C%0A%01", "/missing"] {
            client.send(get(path))
            _ = try client.readResponse()
        }
    }
    let lines = pipe.readAvailable().split(separator: "\n")
    #expect(lines.count == 3)
    let objects = try lines.map { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] ?? [:] }
    #expect(objects.map { $0["path"] as? String } == ["/items/1", "/items/a\"b\\\n\u{01}", "/missing"])
    #expect(objects.map { $0["status"] as? Int } == [200, 200, 404])
    for object in objects {
        #expect(object["method"] as? String == "GET")
        #expect((object["remote"] as? String)?.hasPrefix("127.0.0.1:") == true)
        #expect((object["time"] as? String)?.count == 20)
        #expect(object["bytes"] is Int)
        #expect(object["duration_ms"] is Double || object["duration_ms"] is Int)
        #expect((object["request"] as? String)?.isEmpty == false)
    }
}

@Test
func accessLog_FlushesAtShutdown_NotPerRequest() throws {
    let pipe = try LogPipe()
    try withLoggingServer(
        format: .text, into: pipe,
        configure: { $0.flushInterval = 3600 }
    ) { _, client in
        for i in 0..<5 {
            client.send(get("/items/\(i)"))
            _ = try client.readResponse()
        }
        // Buffered: nothing written yet (the buffer is far from half full, the tick an hour away).
        #expect(pipe.readAvailable().isEmpty)
    }
    let lines = pipe.readAvailable().split(separator: "\n")
    #expect(lines.count == 5)
    #expect(lines.map { $0.contains("\"GET /items/") } == Array(repeating: true, count: 5))
}

/// A line reaches the output within the flush interval while the server runs (operations.md:
/// "every second"), not only at shutdown: the loop queues it, the writer's tick writes it.
@Test(arguments: HTTPIOBackend.available)
func accessLog_ReachesTheOutputWithinTheFlushInterval(backend: HTTPIOBackend) throws {
    let pipe = try LogPipe()
    try withLoggingServer(
        backend: backend, format: .text, into: pipe,
        configure: { $0.flushInterval = 0.2 }
    ) { _, client in
        client.send(get("/items/42"))
        _ = try client.readResponse()
        var written = ""
        let deadline = Date().addingTimeInterval(5)
        while !written.contains("\"GET /items/42\" 200 ") && Date() < deadline {
            usleep(20_000)
            written += pipe.readAvailable()
        }
        #expect(written.contains("\"GET /items/42\" 200 "))
        #expect(written.split(separator: "\n").count == 1)
    }
}

@Test(arguments: HTTPIOBackend.available)
func accessLog_DropsAndCounts_WhenOutputIsBlocked(backend: HTTPIOBackend) throws {
    // A 4 KiB pipe nobody reads: the writer thread blocks in write(2) almost at once; the loops must
    // go on answering and drop lines once their own 4 KiB buffers are full.
    let pipe = try LogPipe(capacity: 4096)
    try withLoggingServer(
        backend: backend, format: .text, into: pipe,
        configure: {
            $0.bufferBytes = 4096
            $0.flushInterval = 0.01
        }
    ) { server, client in
        for i in 0..<2000 {
            client.send(get("/items/\(i)"))
            let response = try client.readResponse()
            #expect(response.status == 200)
            if response.status != 200 { break }
        }
        #expect(server.accessLogDroppedLines > 1000)
        // Unblock the writer (its write now fails with EPIPE) so shutdown does not wait for it.
        pipe.closeRead()
    }
}
