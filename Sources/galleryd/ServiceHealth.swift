import Foundation

/// Decides whether galleryd may ping the systemd watchdog: only while every event loop has turned
/// recently, the handler pool gets through its queue and the database pool hands out connections.
/// A process that is merely busy keeps pinging; one whose threads are all stuck stops, so systemd
/// (`WatchdogSec=`) restarts it.
final class ServiceHealth: @unchecked Sendable {
    /// One look at the moving parts.
    struct Sample: Sendable {
        /// Seconds since the least recently turned event loop last ticked.
        var oldestLoopTurnAge: Double
        /// Handler jobs waiting for a thread, and handler jobs started so far.
        var queuedHandlers: Int
        var startedHandlers: Int
        /// Callers waiting for a database connection, and connections handed out so far.
        var databaseWaiting: Int
        var databaseHandedOut: Int
    }

    /// A loop that has not turned for this long is hung (loops tick every 250 ms while free).
    let loopStaleAfter: Double
    /// Work queued with no progress for this long means every thread of that pool is stuck.
    let progressStaleAfter: Double
    private let lock = NSLock()
    private var handlerMark: (started: Int, at: Double)?
    private var databaseMark: (handedOut: Int, at: Double)?

    /// Thresholds in seconds.
    init(loopStaleAfter: Double, progressStaleAfter: Double) {
        self.loopStaleAfter = loopStaleAfter
        self.progressStaleAfter = progressStaleAfter
    }

    /// What is wrong with `sample` taken at `now` (monotonic seconds): empty when healthy.
    func problems(_ sample: Sample, now: Double) -> [String] {
        lock.lock()
        defer { lock.unlock() }
        var problems: [String] = []
        if sample.oldestLoopTurnAge > loopStaleAfter {
            problems.append("an event loop has not turned for \(String(format: "%.1f", sample.oldestLoopTurnAge)) s")
        }
        // The clock of "no progress" starts when the counter last moved or the queue was last empty.
        if handlerMark == nil || handlerMark!.started != sample.startedHandlers || sample.queuedHandlers == 0 {
            handlerMark = (sample.startedHandlers, now)
        } else if now - handlerMark!.at > progressStaleAfter {
            problems.append("\(sample.queuedHandlers) handler jobs queued and none started for \(Int(now - handlerMark!.at)) s")
        }
        if databaseMark == nil || databaseMark!.handedOut != sample.databaseHandedOut || sample.databaseWaiting == 0 {
            databaseMark = (sample.databaseHandedOut, now)
        } else if now - databaseMark!.at > progressStaleAfter {
            problems.append(
                "\(sample.databaseWaiting) callers waiting for a database connection and none handed out for \(Int(now - databaseMark!.at)) s")
        }
        return problems
    }

    /// Monotonic seconds, for `problems(_:now:)`.
    static func monotonicSeconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}
