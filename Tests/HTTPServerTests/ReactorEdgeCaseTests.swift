import Foundation
import Testing

@testable import HTTPServer

// The traps of event notification, written down as tests and run against both reactors:
// Dispatch on Linux is where this project already met one (signal sources that never fired).

private func edgeRoutes(_ router: HTTPRouter) {
    router.add(.get, "/hello", mayBlock: false) { _ in .text("hello") }
    router.add(.get, "/slow") { _ in
        usleep(300_000)
        return .text("slow")
    }
}

/// Server-side sockets on `port` still in CLOSE_WAIT: the client closed but our descriptor was
/// never closed (a source cancelled without its cancel handler running, say).
private func closeWaitCount(port: Int) -> Int {
    var count = 0
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        guard let text = try? String(contentsOfFile: table, encoding: .utf8) else { continue }
        for line in text.split(separator: "\n").dropFirst() {
            let fields = line.split(separator: " ")
            guard fields.count > 3, let local = fields[1].split(separator: ":").last else { continue }
            if Int(local, radix: 16) == port && fields[3] == "08" { count += 1 }
        }
    }
    return count
}

/// Waits up to `seconds` for `condition`.
private func eventually(_ seconds: Double = 3, _ condition: () -> Bool) -> Bool {
    let end = Date().addingTimeInterval(seconds)
    while Date() < end {
        if condition() { return true }
        usleep(10_000)
    }
    return condition()
}

@Test(arguments: HTTPIOBackend.available)
func reactor_AnswersEveryRequest_WhenDataAndEndOfStreamArriveInOneEvent(backend: HTTPIOBackend) throws {
    try withServer(backend: backend, configure: { $0.timeouts.idleKeepAlive = 60 }, routes: edgeRoutes) { server in
        for _ in 0..<200 {
            let client = try RawClient(port: server.port)
            // Three pipelined requests and the FIN, as close together as the kernel allows.
            client.send(get("/hello") + get("/hello") + get("/hello"))
            client.shutdownWrite()
            for _ in 0..<3 { #expect(try client.readResponse().text == "hello") }
            #expect(client.isClosedByServer())
        }
    }
}

@Test(arguments: HTTPIOBackend.available)
func reactor_KeepsConnection_WhenWokenWithNothingToRead(backend: HTTPIOBackend) throws {
    let observer = RecordingObserver()
    try withServer(backend: backend, observer: observer, routes: edgeRoutes) { server in
        // Connected, then silent: nothing to read yet; the request comes later on the same socket.
        let late = try RawClient(port: server.port)
        usleep(100_000)
        late.send(get("/hello"))
        #expect(try late.readResponse().text == "hello")
        // A FIN with no data at all, and a reset with no data at all.
        for reset in [false, true] {
            let client = try RawClient(port: server.port)
            if reset {
                var hard = linger(l_onoff: 1, l_linger: 0)
                setsockopt(client.fd, SOL_SOCKET, SO_LINGER, &hard, socklen_t(MemoryLayout<linger>.size))
            }
            client.shutdownWrite()
            if !reset { #expect(client.isClosedByServer()) }
        }
        #expect(eventually { observer.closed == 2 })
        late.send(get("/hello"))
        #expect(try late.readResponse().text == "hello")
    }
    #expect(observer.opened == observer.closed)
}

@Test(arguments: HTTPIOBackend.available)
func reactor_CleansUp_WhenConnectionClosesWhileItsHandlerRuns(backend: HTTPIOBackend) throws {
    let observer = RecordingObserver()
    try withServer(backend: backend, observer: observer, routes: edgeRoutes) { server in
        for _ in 0..<5 {
            let client = try RawClient(port: server.port)
            var hard = linger(l_onoff: 1, l_linger: 0)
            setsockopt(client.fd, SOL_SOCKET, SO_LINGER, &hard, socklen_t(MemoryLayout<linger>.size))
            client.send(get("/slow"))
            usleep(20_000)  // the handler is running now; the reset comes during it
        }
        #expect(eventually { observer.finished.count == 5 && observer.closed == 5 })
        let next = try RawClient(port: server.port)
        next.send(get("/hello"))
        #expect(try next.readResponse().text == "hello")
    }
    #expect(observer.opened == observer.closed)
}

@Test(arguments: HTTPIOBackend.available)
func reactor_ForceClosesConnection_WhileItsHandlerRuns(backend: HTTPIOBackend) throws {
    let finished = LockedCounter()
    try withServer(
        backend: backend, configure: { $0.drainTimeout = 0.1 },
        routes: { router in
            router.add(.get, "/stuck") { _ in
                usleep(500_000)
                finished.increment()
                return .text("late")
            }
        }
    ) { server in
        let client = try RawClient(port: server.port)
        client.send(get("/stuck"))
        usleep(50_000)
        // withServer's shutdown and wait follow: the drain timeout closes the connection while
        // the handler still runs, and its late answer must find the connection gone, quietly.
    }
    #expect(eventually { finished.value == 1 })
    usleep(50_000)  // the handler's answer is posted to the stopped loop: it must not crash
}

@Test(arguments: HTTPIOBackend.available)
func reactor_Handles10kConnectionsOpenedAndClosed(backend: HTTPIOBackend) throws {
    let observer = RecordingObserver()
    var port = 0
    try withServer(backend: backend, observer: observer, routes: edgeRoutes) { server in
        port = server.port
        for _ in 0..<100 {
            let batch = try (0..<100).map { _ in try RawClient(port: server.port) }
            for client in batch { client.send(get("/hello")) }
            for client in batch { #expect(try client.readResponse().status == 200) }
        }
        #expect(eventually(10) { observer.closed == 10_000 })
        #expect(eventually { closeWaitCount(port: server.port) == 0 })
        let after = try RawClient(port: server.port)
        after.send(get("/hello"))
        #expect(try after.readResponse().text == "hello")
    }
    #expect(observer.opened == 10_001)
    #expect(observer.closed == 10_001)
    #expect(closeWaitCount(port: port) == 0)
}

@Test(arguments: HTTPIOBackend.available)
func reactor_AnswersEveryConnection_WhenMoreAreReadyThanOneBatch(backend: HTTPIOBackend) throws {
    // 600 sockets made ready together, one loop: more than one epoll_wait (256 events) returns and,
    // under Dispatch on Linux, more than one firing of its source takes (decision 041).
    try withServer(backend: backend, configure: { $0.eventLoopThreads = 1 }, routes: edgeRoutes) { server in
        let clients = try (0..<600).map { _ in try RawClient(port: server.port) }
        for client in clients { client.send(get("/hello")) }
        for client in clients { #expect(try client.readResponse().text == "hello") }
        // Again on the same connections: every one of them was left ready for its next request.
        for client in clients { client.send(get("/hello") + get("/hello")) }
        for client in clients {
            #expect(try client.readResponse().text == "hello")
            #expect(try client.readResponse().text == "hello")
        }
    }
}
