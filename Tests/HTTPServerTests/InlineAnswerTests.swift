import Foundation
import Synchronization
import Testing

@testable import HTTPServer

/// `HTTPRoute.inlineAnswer`: a blocking route's answer from memory, given on the event loop; nil
/// sends the request to the handler on the pool as before. Answers stay in request order.
private func inlineRoutes(_ router: HTTPRouter, handled: Counter) {
    router.add(
        HTTPRoute(
            .get, "/page/:n",
            inlineAnswer: { request in
                guard request.headers["X-Known"] == "yes" else { return nil }
                var response = HTTPResponse.text("inline \(request.pathParameters["n"] ?? "?")")
                response.headers["X-Answered"] = "loop"
                return response
            }
        ) { request in
            handled.increment()
            let n = Int(request.pathParameters["n"] ?? "") ?? 0
            usleep(UInt32(max(0, 3 - n) * 20_000))  // earlier requests take longer
            return .text("handler \(n)")
        })
}

/// A thread-safe count.
final class Counter: Sendable {
    private let count = Atomic(0)
    var value: Int { count.load(ordering: .relaxed) }
    func increment() { count.add(1, ordering: .relaxed) }
}

@Test(arguments: HTTPIOBackend.available)
func inlineAnswer_AnswersOnTheLoop_OrLeavesTheRequestToTheHandler(backend: HTTPIOBackend) throws {
    let handled = Counter()
    let observer = RecordingObserver()
    try withServer(backend: backend, observer: observer, routes: { inlineRoutes($0, handled: handled) }) { server in
        let client = try RawClient(port: server.port)
        client.send(get("/page/1", headers: "X-Known: yes\r\n"))
        let inline = try client.readResponse()
        #expect(inline.status == 200 && inline.text == "inline 1" && inline.headers["X-Answered"] == "loop")
        #expect(inline.headers["X-Request-Id"] != nil && inline.headers["Date"] != nil)
        #expect(handled.value == 0)
        client.send(get("/page/2"))
        let fallback = try client.readResponse()
        #expect(fallback.text == "handler 2" && fallback.headers["X-Answered"] == nil)
        #expect(handled.value == 1)
        // Pipelined: a slow handler's answer still comes before the inline one behind it.
        client.send(get("/page/0") + get("/page/5", headers: "X-Known: yes\r\n") + get("/page/2"))
        #expect(try client.readResponse().text == "handler 0")
        #expect(try client.readResponse().text == "inline 5")
        #expect(try client.readResponse().text == "handler 2")
        #expect(handled.value == 3)
    }
    // Inline answers are reported like any other.
    #expect(observer.finished.filter { $0.pattern == "/page/:n" }.count == 5)
}
