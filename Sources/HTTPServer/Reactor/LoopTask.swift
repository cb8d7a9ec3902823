/// A task posted to an event loop from another thread (`Reactor.post`), on its way to the loop.
// @unchecked: it runs on the loop's thread or queue, where what it captures (a connection) lives.
struct LoopTask: @unchecked Sendable {
    /// The work, run once on the loop.
    let run: () -> Void
}
