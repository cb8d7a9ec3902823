import Synchronization

/// A bounded set of slots in front of work that must not take every handler thread or much
/// memory at once: logins, sign-ups and password changes (the password hash pool, `AccountService`)
/// and the JavaScript SDK's JSON uploads (a body read and decoded in one pass before its keys are
/// known, `ParseRoutes.uploadJSONFile`). The work takes a slot for its whole run, at most `capacity` at
/// once, where `capacity` is never more than half the handler threads. Past it the request is
/// refused at once (503 with `Retry-After`, which the SDKs retry) instead of waiting on a handler
/// thread, so a flood leaves the other half of the threads to everything else.
final class HandlerSlots: Sendable {
    /// Slots in all.
    let capacity: Int
    private let taken = Atomic<Int>(0)

    /// `configured` slots (0: half of `handlerThreads`), never more than half of `handlerThreads`
    /// and at least one.
    init(configured: Int, handlerThreads: Int) {
        let half = max(1, handlerThreads / 2)
        capacity = configured > 0 ? min(configured, half) : half
    }

    /// Slots taken now.
    var inUse: Int { taken.load(ordering: .relaxed) }

    /// Runs `body` in a slot; throws `busy` without running it when every slot is taken.
    func run<T>(refusing busy: @autoclosure () -> Error, _ body: () throws -> T) throws -> T {
        var current = taken.load(ordering: .relaxed)
        while true {
            guard current < capacity else { throw busy() }
            let (exchanged, original) = taken.compareExchange(
                expected: current, desired: current + 1, ordering: .acquiringAndReleasing)
            if exchanged { break }
            current = original
        }
        defer { taken.subtract(1, ordering: .releasing) }
        return try body()
    }

    /// A login's slot: `AccountError.busy` (503, "Too many logins in progress") when all are taken.
    func run<T>(_ body: () throws -> T) throws -> T {
        try run(refusing: AccountError.busy(retryAfterSeconds: 1), body)
    }
}
