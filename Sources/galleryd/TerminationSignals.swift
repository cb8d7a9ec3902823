import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// SIGTERM and SIGINT for `serve` and `worker`: blocked in every thread and taken by one thread
/// with `sigwait`, so each reaches the handler exactly once.
///
/// Dispatch signal sources failed here: in release builds the sources were released (and so
/// cancelled) right after `run()` created them, since `_ = sources` does not extend a lifetime, and
/// on Linux libdispatch reads signals from a `signalfd` that only sees a signal no thread accepts —
/// threads started before the sources existed took it with the no-op handler. `kill` did nothing.
enum TerminationSignals {
    /// The signals that stop the process.
    static let numbers: [Int32] = [SIGTERM, SIGINT]

    /// Blocks the signals in the calling thread. Call it first thing in `run()`, before any thread
    /// is created, so that every thread inherits the mask and none can take the signal.
    static func block() {
        var set = signalSet()
        pthread_sigmask(SIG_BLOCK, &set, nil)
    }

    /// Starts the thread that waits for the signals and calls `handler` with each one's number.
    static func handle(_ handler: @escaping @Sendable (Int32) -> Void) {
        let thread = Thread {
            var set = signalSet()
            while true {
                var number: Int32 = 0
                if sigwait(&set, &number) == 0 { handler(number) }
            }
        }
        thread.name = "galleryd-signals"
        thread.start()
    }

    private static func signalSet() -> sigset_t {
        var set = sigset_t()
        sigemptyset(&set)
        for number in numbers { sigaddset(&set, number) }
        return set
    }
}
