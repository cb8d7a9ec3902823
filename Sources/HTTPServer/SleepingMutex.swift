#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// State that an event loop and the handler threads take on every request (the loop's posted
/// tasks, the `ManifestCache`'s tag inputs), behind a plain `pthread_mutex_t`: a thread that finds
/// it held sleeps at once on an ordinary futex and the unlock wakes it. `Synchronization.Mutex` on
/// Linux first spins 1,000 `pause`s, then sleeps on a priority-inheritance futex; on a server
/// pinned to one core the owner cannot run while the waiter spins, and that spin was 4.3 % of the
/// cache-off count's CPU (docs/decisions/053, 057).
///
/// `@unchecked Sendable`: `state` is touched only while the mutex is held.
public final class SleepingMutex<State>: @unchecked Sendable {
    /// The mutex and the state live in memory of their own: a mutex must not move, and `&state` of
    /// a stored property would add a dynamic exclusivity check to every lock.
    @usableFromInline let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    @usableFromInline let state = UnsafeMutablePointer<State>.allocate(capacity: 1)

    /// An unlocked mutex over `state`.
    public init(_ state: State) {
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        self.state.initialize(to: state)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
        state.deinitialize(count: 1)
        state.deallocate()
    }

    /// `body`'s result over the state, alone. Inlinable, so a caller in another module gets it
    /// specialised for its state, as within this one.
    @inlinable @inline(__always)
    public func withLock<R>(_ body: (inout State) throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&state.pointee)
    }
}
