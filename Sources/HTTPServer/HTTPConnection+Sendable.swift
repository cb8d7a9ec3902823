/// A connection is handed to closures that hop back onto its loop (`EventLoop.execute`, a body
/// stream's waker), where alone it is touched.
// @unchecked: thread-confined; every field is touched only on its event loop's thread (no lock per request).
extension HTTPConnection: @unchecked Sendable {}
