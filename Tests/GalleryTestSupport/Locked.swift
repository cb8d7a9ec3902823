import Synchronization

/// A thread-safe box for values written from other threads (listener handlers, worker threads).
public final class Locked<Value: Sendable>: Sendable {
    private let value: Mutex<Value>

    /// Wraps `value`.
    public init(_ value: Value) { self.value = Mutex(value) }

    /// Runs `body` with exclusive access to the value.
    public func withValue<T: Sendable>(_ body: (inout Value) -> T) -> T {
        value.withLock { body(&$0) }
    }

    /// A copy of the value now.
    public var current: Value { withValue { $0 } }
}
