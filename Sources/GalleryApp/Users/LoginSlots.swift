import Synchronization

/// The bounded queue in front of the password hash pool: logins, sign-ups and password changes
/// take a slot for their whole run (the throttle, the hash and the session), at most `capacity`
/// at once, where `capacity` is never more than half the handler threads. Past it the request is
/// refused at once (`AccountError.busy`, 503 with `Retry-After`) instead of waiting on a handler
/// thread, so a flood of logins leaves the other half of the threads to everything else. Inside a
/// slot, hashes run at most one per core (`PasswordHasher`'s gate); the rest of the slots are the queue.
final class LoginSlots: Sendable {
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

    /// Runs `body` in a slot; throws `AccountError.busy` without running it when every slot is taken.
    func run<T>(_ body: () throws -> T) throws -> T {
        var current = taken.load(ordering: .relaxed)
        while true {
            guard current < capacity else { throw AccountError.busy(retryAfterSeconds: 1) }
            let (exchanged, original) = taken.compareExchange(
                expected: current, desired: current + 1, ordering: .acquiringAndReleasing)
            if exchanged { break }
            current = original
        }
        defer { taken.subtract(1, ordering: .releasing) }
        return try body()
    }
}
