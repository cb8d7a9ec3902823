/// What a watchdog needs to tell a hung server from a busy one: when each event loop last
/// turned, and whether the handler pool is getting through its queue.
public struct HTTPServerProgress: Sendable, Equatable {
    /// Seconds since the event loop that turned least recently last ran its deadline tick (a loop
    /// ticks at least every 250 ms while it is free); 0 before start and after stop.
    public var oldestLoopTurnAge: Double
    /// Handler jobs waiting for a thread.
    public var queuedHandlers: Int
    /// Handler jobs started since the server was made; standing still while `queuedHandlers > 0`
    /// means every handler thread is stuck.
    public var startedHandlers: Int

    /// A snapshot.
    public init(oldestLoopTurnAge: Double, queuedHandlers: Int, startedHandlers: Int) {
        self.oldestLoopTurnAge = oldestLoopTurnAge
        self.queuedHandlers = queuedHandlers
        self.startedHandlers = startedHandlers
    }
}
