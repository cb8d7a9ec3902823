import Testing

@testable import HTTPServer

// The router's flat table (`HTTPRouteTable`, decision 059) routes every URL as the tree it is made
// from: literal before parameter before rest, backtracking, HEAD to GET, OPTIONS-only nodes,
// methods outside the common set, and literals that are not ASCII.

/// The bucket's routes as the app registers them: the two size routes, then the bucket's `*key`,
/// and a CORS preflight catch-all.
private func bucketRouter() -> HTTPRouter {
    let router = HTTPRouter()
    router.add(route(.get, "/health"))
    router.add(route(.get, "/parse/classes/:className"))
    router.add(route(.get, "/bucket/s/:expires/:signature/sizes/:photo/:file"))
    router.add(route(.get, "/bucket/sizes/:photo/:file"))
    router.add(route(.get, "/bucket/*key"))
    router.add(route(.options, "/parse/*path"))
    return router
}

@Test func routeTable_SizeURLs_GoToTheSizeRoutes_AndLookalikeKeysToTheBucket() {
    let router = bucketRouter()
    let size = "/bucket/s/1796428800/AbC-_9/sizes/p1/s.jpg"
    #expect(pattern(router.match(method: .get, path: size)) == "/bucket/s/:expires/:signature/sizes/:photo/:file")
    #expect(
        parameters(router.match(method: .get, path: size))
            == ["expires": "1796428800", "signature": "AbC-_9", "photo": "p1", "file": "s.jpg"])
    #expect(pattern(router.match(method: .get, path: "/bucket/sizes/p1/s.jpg")) == "/bucket/sizes/:photo/:file")
    // Lookalikes: a signed thumbnail, "sizes" one segment short or long, a literal's prefix or
    // extension, an empty segment where a parameter is wanted, and the literal in another case.
    let bucket: [String: String] = [
        "/bucket/s/1796428800/AbC/thumbnails/p1.jpg": "s/1796428800/AbC/thumbnails/p1.jpg",
        "/bucket/s/1796428800/AbC/sizes/p1": "s/1796428800/AbC/sizes/p1",
        "/bucket/s/1796428800/AbC/sizes/p1/s.jpg/x": "s/1796428800/AbC/sizes/p1/s.jpg/x",
        "/bucket/s/1796428800/AbC/size/p1/s.jpg": "s/1796428800/AbC/size/p1/s.jpg",
        "/bucket/s/1796428800/AbC/sizesx/p1/s.jpg": "s/1796428800/AbC/sizesx/p1/s.jpg",
        "/bucket/s//AbC/sizes/p1/s.jpg": "s//AbC/sizes/p1/s.jpg",
        "/bucket/sizes/p1/": "sizes/p1/",
        "/bucket/sizes//s.jpg": "sizes//s.jpg",
        "/bucket/Sizes/p1/s.jpg": "Sizes/p1/s.jpg",
        "/bucket/sizes": "sizes",
        "/bucket/s": "s",
        "/bucket/originals/ab/c.jpg": "originals/ab/c.jpg",
    ]
    for (path, key) in bucket {
        #expect(pattern(router.match(method: .get, path: path)) == "/bucket/*key", "\(path)")
        #expect(parameters(router.match(method: .get, path: path)) == HTTPPathParameters(captures: [("key", key[...])]))
    }
    // The literal first segment decides: no route under another, nor a prefix of one.
    for path in ["/buckets/x", "/bucke/x", "/healthz", "/", ""] {
        guard case .notFound = router.match(method: .get, path: path) else {
            Issue.record("expected 404 for \(path)")
            continue
        }
    }
    #expect(pattern(router.match(method: .head, path: size)) == "/bucket/s/:expires/:signature/sizes/:photo/:file")
}

@Test func routeTable_LiteralBeatsParameterBeatsRest_AtEveryDepth_WithBacktracking() {
    let router = HTTPRouter()
    router.add(route(.get, "/a/:x/c"))
    router.add(route(.get, "/a/b/:y"))
    router.add(route(.get, "/a/b/c/d"))
    router.add(route(.get, "/a/*rest"))
    router.add(route(.post, "/a/b/e"))
    #expect(pattern(router.match(method: .get, path: "/a/b/c")) == "/a/b/:y")
    #expect(pattern(router.match(method: .get, path: "/a/q/c")) == "/a/:x/c")
    #expect(pattern(router.match(method: .get, path: "/a/b/c/d")) == "/a/b/c/d")
    // "/a/b/c/e": the literal b, then c, fails below; :y takes one segment only; :x wants "c" next.
    #expect(pattern(router.match(method: .get, path: "/a/b/c/e")) == "/a/*rest")
    #expect(parameters(router.match(method: .get, path: "/a/b/c/e")) == ["rest": "b/c/e"])
    // POST only at the literal e: GET backtracks to the parameter there.
    #expect(pattern(router.match(method: .get, path: "/a/b/e")) == "/a/b/:y")
    #expect(pattern(router.match(method: .post, path: "/a/b/e")) == "/a/b/e")
    guard case .methodNotAllowed(let allow) = router.match(method: .delete, path: "/a/b/e") else {
        Issue.record("expected 405")
        return
    }
    #expect(allow == "OPTIONS, POST")
}

@Test func routeTable_OptionsOnlyNodes_AndOtherMethods_AndNonASCIILiterals() {
    let router = HTTPRouter()
    router.add(route(.options, "/parse/*path"))
    router.add(route(HTTPMethod(rawValue: "PROPFIND"), "/dav/:name"))
    router.add(route(.get, "/café/menu"))
    router.add(route(.get, "/café/:dish"))
    // A preflight catch-all is there for OPTIONS only: 404 to GET.
    guard case .notFound = router.match(method: .get, path: "/parse/x") else {
        Issue.record("expected 404")
        return
    }
    // To OPTIONS it is the route; a path without an OPTIONS route gets the server's `Allow` answer.
    #expect(pattern(router.match(method: .options, path: "/parse/x/y")) == "/parse/*path")
    #expect(pattern(router.match(method: HTTPMethod(rawValue: "PROPFIND"), path: "/dav/a")) == "/dav/:name")
    guard case .options(let allow) = router.match(method: .options, path: "/dav/a") else {
        Issue.record("expected OPTIONS")
        return
    }
    #expect(allow == "OPTIONS, PROPFIND")
    guard case .methodNotAllowed(let davAllow) = router.match(method: .get, path: "/dav/a") else {
        Issue.record("expected 405")
        return
    }
    #expect(davAllow == "OPTIONS, PROPFIND")
    // Not ASCII: the literal matches its canonical equivalent (e + combining acute), bytes differ.
    #expect(pattern(router.match(method: .get, path: "/café/menu")) == "/café/menu")
    #expect(pattern(router.match(method: .get, path: "/cafe\u{301}/menu")) == "/café/menu")
    #expect(parameters(router.match(method: .get, path: "/café/soupe")) == ["dish": "soupe"])
}

@Test func routeTable_EveryMethodOfANode_GetsItsOwnRoute_AndHEADItsOwnBeforeGET() {
    // The route found is taken from the node's slot for the method's bit (decision 041, round 9).
    let methods: [HTTPMethod] = [.get, .head, .post, .put, .patch, .delete, .options, HTTPMethod(rawValue: "PROPFIND")]
    let router = HTTPRouter()
    for method in methods { router.add(HTTPRoute(method, "/x/:id") { _ in .text(method.rawValue) }) }
    for method in methods {
        guard case .route(let found, let parameters) = router.match(method: method, path: "/x/1") else {
            Issue.record("expected a route for \(method)")
            continue
        }
        #expect(found.method == method)
        #expect(parameters == ["id": "1"])
    }
    // HEAD without a route of its own goes to GET; a method with none is not allowed.
    let getOnly = HTTPRouter()
    getOnly.add(route(.get, "/y"))
    getOnly.add(route(.post, "/y"))
    guard case .route(let head, _) = getOnly.match(method: .head, path: "/y") else {
        Issue.record("expected GET's route for HEAD")
        return
    }
    #expect(head.method == .get)
    guard case .route(let post, _) = getOnly.match(method: .post, path: "/y") else {
        Issue.record("expected POST's route")
        return
    }
    #expect(post.method == .post)
    guard case .methodNotAllowed = getOnly.match(method: .delete, path: "/y") else {
        Issue.record("expected 405 for DELETE")
        return
    }
}
