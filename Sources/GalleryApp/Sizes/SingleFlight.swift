import Dispatch
import Synchronization

/// Runs one piece of work per key at a time and hands its result to every caller that asked
/// while it ran: 200 requests for a size not rendered yet make one render, and 199 waits.
/// Callers block (they run on the handler pool, never on an event loop). A key is free again
/// as soon as its work finishes, so a failed render is tried again by the next request.
final class SingleFlight<Value: Sendable>: Sendable {
    /// One run of the work: its waiters block on `done` until the leader stores `result`.
    private final class Flight: Sendable {
        let done = DispatchSemaphore(value: 0)
        let waiters = Atomic<Int>(0)
        let result = Mutex<Result<Value, any Error>?>(nil)
    }

    private let flights = Mutex<[String: Flight]>([:])

    /// An empty set of flights.
    init() {}

    /// The result of `work` for `key`: run here when no other caller runs it now, else the result
    /// of that run (its error rethrown).
    func run(_ key: String, _ work: () throws -> Value) throws -> Value {
        let (flight, leads) = flights.withLock { flights -> (Flight, Bool) in
            if let running = flights[key] {
                running.waiters.add(1, ordering: .relaxed)
                return (running, false)
            }
            let flight = Flight()
            flights[key] = flight
            return (flight, true)
        }
        guard leads else {
            flight.done.wait()
            return try flight.result.withLock { $0! }.get()
        }
        let result = Result<Value, any Error> { try work() }
        flight.result.withLock { $0 = result }
        // Taken out under the lock, so no caller joins after the waiters are counted.
        let waiters = flights.withLock { flights -> Int in
            flights[key] = nil
            return flight.waiters.load(ordering: .relaxed)
        }
        for _ in 0..<waiters { flight.done.signal() }
        return try result.get()
    }
}
