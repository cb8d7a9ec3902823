/// What became of a watched connection socket, in a backend-neutral form.
struct ReactorEvents: OptionSet, Sendable {
    let rawValue: UInt8
    /// Bytes (or an end of stream) can be read.
    static let readable = ReactorEvents(rawValue: 1)
    /// The send buffer has room again.
    static let writable = ReactorEvents(rawValue: 2)
    /// The peer shut down its side or the socket failed: whatever is still queued is the last of it.
    static let hangUp = ReactorEvents(rawValue: 4)
}

/// Socket readiness for one `EventLoop`, the seam between the loop's policy (accept limits,
/// connection table, deadlines, draining — all in `EventLoop`) and how the operating system
/// reports readiness. Every method is called on the loop's own thread or queue, and every
/// callback into the loop arrives there.
///
/// Three implementations: `DispatchReactor` (a serial queue and a Dispatch source per socket; the
/// Dispatch backend off Linux), `DispatchEpollReactor` (the Dispatch backend on Linux: a serial queue
/// and one Dispatch source over an epoll set) and `EpollReactor` (edge-triggered epoll on its own
/// thread; Linux only).
protocol Reactor: AnyObject {
    /// Whether a short read proves the socket empty until the next event (edge-triggered epoll,
    /// which reports the peer's FIN as its own event). False: connections read until EAGAIN,
    /// because Dispatch on Linux may report data and an end of stream as one event, once.
    var shortReadDrainsSocket: Bool { get }
    /// Starts delivering events (and ticks every `EventLoop.tickNanoseconds`) to the loop.
    func start()
    /// Watches the listening socket: `EventLoop.acceptConnections()` runs when connections wait.
    func watchListener() throws
    /// Stops watching the listener for a moment (out of descriptors); `resumeListener` undoes it.
    func pauseListener()
    /// Watches the listener again after `pauseListener`.
    func resumeListener()
    /// Stops watching the listener for good and gives the loop's share of it back
    /// (`ListenerHandle.release`) once nothing can report on it any more.
    func unwatchListener()
    /// Watches a new, non-blocking connection socket; false when it cannot be watched.
    func watch(_ fd: Int32) -> Bool
    /// Called after the loop handled a connection: whether it wants to read now and whether its
    /// last write stopped on a full send buffer. Level-triggered backends pause the sources the
    /// connection cannot use (else a pipelined request would make them fire without end).
    func interest(_ fd: Int32, read: Bool, write: Bool)
    /// Whether `interest` does anything: false for the edge-triggered epoll sets, so the loop skips
    /// the call (through the existential, a retain and a release per event; decision 041, round 9).
    var usesInterest: Bool { get }
    /// Stops watching a connection and closes its descriptor (Dispatch: in the cancel handler,
    /// when no source can touch it any more).
    func unwatchAndClose(_ fd: Int32)
    /// Runs `task` on the loop. After the loop has stopped it still runs, somewhere, so cleanup is never lost.
    func post(_ task: @escaping () -> Void)
}
