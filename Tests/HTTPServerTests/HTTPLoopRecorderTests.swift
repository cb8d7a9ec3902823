import Foundation
import Synchronization
import Testing

@testable import HTTPServer

/// An observer whose event loops each count into a recorder of their own (decision 041, round 8).
final class PerLoopObserver: HTTPServerObserver, Sendable {
    /// What one loop recorded.
    // @unchecked: written by its own loop only, read by the test after the server has stopped.
    final class Recorder: HTTPLoopRecorder, @unchecked Sendable {
        struct Finished {
            var pattern: String
            var status: Int
            var bytes: Int
        }
        var finished: [Finished] = []
        var nanoseconds: [Int] = []

        func requestFinished(method: HTTPMethod, routePattern: String, status: Int, nanoseconds: Int, bytesSent: Int) {
            finished.append(Finished(pattern: routePattern, status: status, bytes: bytesSent))
            self.nanoseconds.append(nanoseconds)
        }
    }

    let recorders = Mutex<[Recorder]>([])
    /// Requests reported to the observer itself: none, when every loop has its recorder.
    let sharedCalls = Mutex(0)

    func makeLoopRecorder() -> any HTTPLoopRecorder {
        let made = Recorder()
        recorders.withLock { $0.append(made) }
        return made
    }

    func connectionOpened() {}
    func connectionClosed() {}
    func requestFinished(method: HTTPMethod, routePattern: String, status: Int, durationSeconds: Double, bytesSent: Int)
    {
        sharedCalls.withLock { $0 += 1 }
    }
}

@Test(arguments: HTTPIOBackend.available)
func server_RecordsEachRequestInItsLoopsOwnRecorder(backend: HTTPIOBackend) throws {
    let observer = PerLoopObserver()
    try withServer(
        backend: backend, configure: { $0.eventLoopThreads = 3 }, observer: observer,
        routes: { router in router.add(.get, "/items/:id") { request in .text("item \(request.pathParameters["id"]!)") }
        }
    ) { server in
        for i in 0..<6 {
            let client = try RawClient(port: server.port)
            client.send(get("/items/\(i)") + get("/missing"))
            #expect(try client.readResponse().status == 200)
            #expect(try client.readResponse().status == 404)
        }
    }
    let recorders = observer.recorders.withLock { $0 }
    #expect(recorders.count == 3)
    let finished = recorders.flatMap(\.finished)
    #expect(finished.count == 12)
    // What was written for the exchange: at least the body ("item 0").
    #expect(finished.filter { $0.pattern == "/items/:id" && $0.status == 200 && $0.bytes >= 6 }.count == 6)
    #expect(finished.filter { $0.pattern == "unmatched" && $0.status == 404 && $0.bytes > 0 }.count == 6)
    #expect(recorders.flatMap(\.nanoseconds).allSatisfy { $0 > 0 })
    #expect(observer.sharedCalls.withLock { $0 } == 0)
}

/// A refilled request keeps the previous request's route pattern until the connection sets it from
/// its match (decision 041, round 10): after a matched request on the same connection, a 405, an
/// OPTIONS answer and a 404 are each recorded as "unmatched", on both backends.
@Test(arguments: HTTPIOBackend.available)
func server_RecordsUnmatched_AfterAMatchedRequestOnTheSameConnection(backend: HTTPIOBackend) throws {
    let observer = PerLoopObserver()
    try withServer(
        backend: backend, observer: observer,
        routes: { router in
            // On the loop, so the request's box is refilled for the next request (on the handler
            // pool, the pool's copy may still hold it, and the next request gets a new box).
            router.add(.get, "/items/:id", mayBlock: false) { request in .text("item \(request.pathParameters["id"]!)")
            }
        }
    ) { server in
        let client = try RawClient(port: server.port)
        let post = "POST /items/1 HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\n\r\n"
        let options = "OPTIONS /items/1 HTTP/1.1\r\nHost: t\r\n\r\n"
        client.send(get("/items/1") + post + get("/items/2") + options + get("/items/3") + get("/missing"))
        #expect(try (0..<6).map { _ in try client.readResponse().status } == [200, 405, 200, 204, 200, 404])
    }
    let finished = observer.recorders.withLock { $0 }.flatMap(\.finished)
    #expect(
        finished.map(\.pattern) == ["/items/:id", "unmatched", "/items/:id", "unmatched", "/items/:id", "unmatched"])
}
