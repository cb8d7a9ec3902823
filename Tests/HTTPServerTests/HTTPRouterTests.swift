import Testing

@testable import HTTPServer

private func makeRouter() -> HTTPRouter {
    let router = HTTPRouter()
    router.add(route(.get, "/"))
    router.add(route(.get, "/parse/classes/:className"))
    router.add(route(.post, "/parse/classes/:className"))
    router.add(route(.get, "/parse/classes/:className/:objectId"))
    router.add(route(.get, "/parse/classes/Photo/count"))
    router.add(route(.delete, "/parse/classes/Photo/special"))
    router.add(route(.get, "/bucket/*key"))
    return router
}

@Test func router_MatchesLiteralsBeforeParameters() {
    let router = makeRouter()
    #expect(pattern(router.match(method: .get, path: "/parse/classes/Photo/count")) == "/parse/classes/Photo/count")
    #expect(
        pattern(router.match(method: .get, path: "/parse/classes/Photo/abc")) == "/parse/classes/:className/:objectId")
    #expect(pattern(router.match(method: .get, path: "/")) == "/")
}

@Test func router_CapturesParametersAndRest() throws {
    let router = makeRouter()
    guard case .route(_, let parameters) = router.match(method: .get, path: "/parse/classes/Photo/xyz") else {
        Issue.record("no match")
        return
    }
    #expect(parameters == ["className": "Photo", "objectId": "xyz"])
    guard case .route(_, let rest) = router.match(method: .get, path: "/bucket/originals/ab/c.jpg") else {
        Issue.record("no match")
        return
    }
    #expect(rest == ["key": "originals/ab/c.jpg"])
}

@Test func router_BacktracksToRouteWithTheMethod() {
    let router = makeRouter()
    // The literal "special" only has DELETE; GET must fall back to the :objectId route.
    #expect(
        pattern(router.match(method: .get, path: "/parse/classes/Photo/special"))
            == "/parse/classes/:className/:objectId")
    #expect(
        pattern(router.match(method: .delete, path: "/parse/classes/Photo/special")) == "/parse/classes/Photo/special")
}

@Test func router_AnswersHeadWithGetRoute() {
    #expect(pattern(makeRouter().match(method: .head, path: "/parse/classes/Photo")) == "/parse/classes/:className")
}

@Test func router_Returns405WithAllow_WhenMethodMissing() {
    guard case .methodNotAllowed(let allow) = makeRouter().match(method: .put, path: "/parse/classes/Photo") else {
        Issue.record("expected 405")
        return
    }
    #expect(allow == "GET, HEAD, OPTIONS, POST")
}

@Test func router_AnswersOptionsWithAllow() {
    guard case .options(let allow) = makeRouter().match(method: .options, path: "/bucket/x") else {
        Issue.record("expected OPTIONS")
        return
    }
    #expect(allow == "GET, HEAD, OPTIONS")
}

@Test func router_Returns404_WhenNoPathMatches() {
    let router = makeRouter()
    for path in ["/nope", "/parse", "/parse/classes", "/parse/classes/Photo/a/b", "/bucket"] {
        guard case .notFound = router.match(method: .get, path: path) else {
            Issue.record("expected 404 for \(path)")
            continue
        }
    }
}

private struct TaggedResponder: HTTPErrorResponder {
    let tag: String
    func response(for error: Error, request: HTTPRequest) -> HTTPResponse { .text(tag, status: .internalServerError) }
    func response(status: HTTPStatus, message: String, request: HTTPRequest) -> HTTPResponse {
        .text(tag, status: status)
    }
}

@Test func router_PicksLongestMountedPrefix() {
    let router = HTTPRouter()
    router.mount(prefix: "/parse", errorResponder: TaggedResponder(tag: "parse"))
    router.mount(prefix: "/parse/files/", errorResponder: TaggedResponder(tag: "files"))
    func tag(_ path: String) -> String? { (router.errorResponder(for: path) as? TaggedResponder)?.tag }
    #expect(tag("/parse/classes/Photo") == "parse")
    #expect(tag("/parse") == "parse")
    #expect(tag("/parse/files/x.jpg") == "files")
    #expect(tag("/parsec") == nil)
    #expect(tag("/") == nil)
}

@Test func router_RouteForARequestFromNoConnection_GivesTheRouteAndItsParameters_OrNil() throws {
    let router = makeRouter()
    let found = try #require(router.route(method: .get, path: "/parse/classes/Gallery/abc"))
    #expect(found.route.pattern == "/parse/classes/:className/:objectId")
    #expect(found.parameters["className"] == "Gallery" && found.parameters["objectId"] == "abc")
    #expect(
        router.route(method: .get, path: "/parse/classes/Photo/count")?.route.pattern == "/parse/classes/Photo/count")
    // A path without the method, or no path at all, is nil (405 and 404 are the server's answers, not the caller's).
    #expect(router.route(method: .delete, path: "/parse/classes/Photo/abc") == nil)
    #expect(router.route(method: .get, path: "/nowhere/at/all") == nil)
}

/// The first four captures are kept inline and the rest in a list (decisions 041, 052): a route with
/// four parameters, and backtracking out of a third one, must give the same parameters as before.
@Test func router_CapturesMoreThanTwoParameters_AndBacktracksOutOfThem() throws {
    let router = HTTPRouter()
    router.add(route(.get, "/b/s/:expires/:signature/sizes/:photo/:file"))
    router.add(route(.get, "/b/s/:expires/:signature/*rest"))
    router.add(route(.get, "/b/*key"))
    guard case .route(_, let four) = router.match(method: .get, path: "/b/s/17/sig/sizes/p1/m.jpg") else {
        Issue.record("no match")
        return
    }
    #expect(four.count == 4)
    #expect(four.names == ["expires", "signature", "photo", "file"])
    #expect(four == ["expires": "17", "signature": "sig", "photo": "p1", "file": "m.jpg"])
    #expect(four.substring("file") == "m.jpg")
    #expect(four["missing"] == nil && four.substring("missing") == nil)
    // "sizes/p1" has no :file segment: the third and fourth captures are taken back, the rest-capture wins.
    guard case .route(let route, let rest) = router.match(method: .get, path: "/b/s/17/sig/sizes/p1") else {
        Issue.record("no match")
        return
    }
    #expect(route.pattern == "/b/s/:expires/:signature/*rest")
    #expect(rest == ["expires": "17", "signature": "sig", "rest": "sizes/p1"])
    #expect(rest.description == "[expires: 17, signature: sig, rest: sizes/p1]")
    guard case .route(_, let one) = router.match(method: .get, path: "/b/x") else {
        Issue.record("no match")
        return
    }
    #expect(one.count == 1 && one.substring("key") == "x")
}

/// Past the four inline captures the list takes over: six parameters read back in order, and
/// backtracking out of the fifth and sixth (list) and then the fourth (inline) leaves the rest intact.
@Test func router_CapturesSixParameters_AndBacktracksAcrossTheInlineOnes() throws {
    let router = HTTPRouter()
    router.add(route(.get, "/x/:a/:b/:c/:d/:e/:f"))
    router.add(route(.get, "/x/:a/:b/:c/*rest"))
    guard case .route(_, let six) = router.match(method: .get, path: "/x/1/2/3/4/5/6") else {
        Issue.record("no match")
        return
    }
    #expect(six.count == 6)
    #expect(six.names == ["a", "b", "c", "d", "e", "f"])
    #expect(six == ["a": "1", "b": "2", "c": "3", "d": "4", "e": "5", "f": "6"])
    #expect(six["e"] == "5" && six.substring("f") == "6")
    // "/x/1/2/3/4/5" has no sixth segment: :e, then :d are taken back, and *rest gets "4/5".
    guard case .route(let route, let rest) = router.match(method: .get, path: "/x/1/2/3/4/5") else {
        Issue.record("no match")
        return
    }
    #expect(route.pattern == "/x/:a/:b/:c/*rest")
    #expect(rest.count == 4 && rest.names == ["a", "b", "c", "rest"])
    #expect(rest == ["a": "1", "b": "2", "c": "3", "rest": "4/5"])
}
