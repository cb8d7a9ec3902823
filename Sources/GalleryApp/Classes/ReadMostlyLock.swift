#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// State read on every request and changed rarely (a class's app fields or permissions), behind
/// a readers-writer lock: readers never wait for each other, so a reader descheduled while it
/// holds the lock does not make the others on its core spin or sleep, as they would on a
/// `Mutex` (measured on the manifest page: `Mutex._lockSlow` and its futex were 1.2 % of the
/// server's CPU with two such lookups per find; docs/decisions/048).
///
/// `@unchecked Sendable`: `state` is read only under the read lock and changed only under the
/// write lock.
final class ReadMostlyLock<State>: @unchecked Sendable {
    private let lock = UnsafeMutablePointer<pthread_rwlock_t>.allocate(capacity: 1)
    private var state: State

    init(_ state: State) {
        self.state = state
        lock.initialize(to: pthread_rwlock_t())
        pthread_rwlock_init(lock, nil)
    }

    deinit {
        pthread_rwlock_destroy(lock)
        lock.deallocate()
    }

    /// `body`'s result over the state, read beside other readers.
    func read<R>(_ body: (borrowing State) throws -> R) rethrows -> R {
        pthread_rwlock_rdlock(lock)
        defer { pthread_rwlock_unlock(lock) }
        return try body(state)
    }

    /// `body`'s result after it changed the state, alone.
    func write<R>(_ body: (inout State) throws -> R) rethrows -> R {
        pthread_rwlock_wrlock(lock)
        defer { pthread_rwlock_unlock(lock) }
        return try body(&state)
    }
}
