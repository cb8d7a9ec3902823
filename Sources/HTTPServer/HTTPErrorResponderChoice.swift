/// Which `HTTPErrorResponder` renders the errors of a connection's exchange in progress: the one the
/// router mounts over the request's path (Parse JSON under `/parse`, S3 XML under the bucket),
/// chosen only when an error needs it, since most requests never do. A request whose target does
/// not decode (`/parse/%ff`) is answered in the format of the mount its raw path falls under.
struct HTTPErrorResponderChoice {
    /// A chosen responder, boxed: an optional reference is copied with a reference count and dropped
    /// with a release (nothing when nil), where an optional `HTTPErrorResponder` (a protocol open to
    /// value types) is copied and destroyed through its type's value witnesses even when nil: ~230
    /// instructions for each of the exchange's reset, its hand-over to the handler and its drop
    /// (decision 041, round 7).
    final class Chosen: Sendable {
        /// The responder.
        let responder: HTTPErrorResponder

        init(_ responder: HTTPErrorResponder) { self.responder = responder }
    }

    private let router: HTTPRouter
    /// The responder chosen for this exchange so far, boxed; nil until one is needed.
    private(set) var chosenBox: Chosen?

    /// The responder chosen for this exchange so far; nil until one is needed.
    var chosen: HTTPErrorResponder? { chosenBox?.responder }

    /// Chooses among `router`'s mounts.
    init(router: HTTPRouter) {
        self.router = router
    }

    /// The responder for `request`'s errors, chosen by its path the first time (the router's
    /// default when there is no request yet).
    mutating func responder(for request: HTTPRequest?) -> HTTPErrorResponder {
        if let chosenBox { return chosenBox.responder }
        let responder = request.map { router.errorResponder(for: $0.path) } ?? router.defaultErrorResponder
        chosenBox = Chosen(responder)
        return responder
    }

    /// Chooses the responder of the mount over a decoded `path`.
    mutating func choose(forPath path: String) {
        chosenBox = Chosen(router.errorResponder(for: path))
    }

    /// Chooses for a target whose path does not decode, by the path as sent (up to `?` or `#`),
    /// so a mistake under a mount is still answered in that mount's format; the router's default
    /// for a target that is not a path at all, or none.
    mutating func choose(forUndecodable target: String?) {
        guard let target, target.hasPrefix("/") else {
            chosenBox = Chosen(router.defaultErrorResponder)
            return
        }
        chosenBox = Chosen(router.errorResponder(for: String(target.prefix { $0 != "?" && $0 != "#" })))
    }

    /// Forgets the choice: the next exchange chooses again.
    mutating func reset() { if chosenBox != nil { chosenBox = nil } }
}
