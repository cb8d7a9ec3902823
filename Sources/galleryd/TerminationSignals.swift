import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// SIGTERM and SIGINT for `serve` and `worker`: blocked in every thread and taken by one thread
/// with `sigwait`, so each reaches the handler exactly once.
///
/// A Dispatch signal source does not work here on Linux: libdispatch reads the signal from a
/// `signalfd`, which only sees a signal that no thread accepts, and installs a no-op handler —
/// so a signal delivered to any of the server's threads was swallowed and `kill` did nothing.
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
