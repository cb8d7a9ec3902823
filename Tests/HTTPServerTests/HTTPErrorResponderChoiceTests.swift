import Testing

@testable import HTTPServer

/// A responder that says which mount it is.
private struct NamedResponder: HTTPErrorResponder {
    let name: String
    func response(for error: Error, request: HTTPRequest) -> HTTPResponse { .text(name) }
    func response(status: HTTPStatus, message: String, request: HTTPRequest) -> HTTPResponse {
        .text(name, status: status)
    }
}

private func name(_ responder: HTTPErrorResponder) -> String? { (responder as? NamedResponder)?.name }

private func router() -> HTTPRouter {
    let router = HTTPRouter()
    router.defaultErrorResponder = NamedResponder(name: "default")
    router.mount(prefix: "/parse", errorResponder: NamedResponder(name: "parse"))
    router.mount(prefix: "/bucket", errorResponder: NamedResponder(name: "bucket"))
    return router
}

private func request(_ path: String) -> HTTPRequest {
    var request = HTTPRequest(method: .get, target: path, remoteAddress: "test", requestID: "t-0.1")
    request.path = path
    return request
}

@Test
func responderChoice_ChoosesByPathWhenFirstNeeded_AndKeepsItUntilReset() {
    var choice = HTTPErrorResponderChoice(router: router())
    #expect(choice.chosen == nil)
    #expect(name(choice.responder(for: request("/parse/classes/Photo"))) == "parse")
    // Kept for the exchange, whatever is asked next.
    #expect(name(choice.responder(for: request("/bucket/x.jpg"))) == "parse")
    choice.reset()
    #expect(choice.chosen == nil)
    #expect(name(choice.responder(for: request("/bucket/x.jpg"))) == "bucket")
    choice.reset()
    #expect(name(choice.responder(for: request("/parsec"))) == "default")
    choice.reset()
    #expect(name(choice.responder(for: nil)) == "default")
}

@Test
func responderChoice_UndecodableTargets_UseTheMountOfTheRawPath() {
    var choice = HTTPErrorResponderChoice(router: router())
    choice.choose(forUndecodable: "/parse/%ff?where=%ff")
    #expect(name(choice.responder(for: nil)) == "parse")
    choice.choose(forUndecodable: "/bucket%ff#x")
    #expect(name(choice.responder(for: nil)) == "default")
    choice.choose(forUndecodable: "*")
    #expect(name(choice.responder(for: request("/parse/x"))) == "default")
    choice.choose(forUndecodable: nil)
    #expect(name(choice.responder(for: request("/parse/x"))) == "default")
    choice.choose(forPath: "/bucket/a/b")
    #expect(name(choice.responder(for: nil)) == "bucket")
}
