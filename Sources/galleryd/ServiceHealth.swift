import Foundation
import Synchronization

/// Decides whether galleryd may ping the systemd watchdog: only while every event loop has turned
/// recently, the handler pool gets through its queue and the database pool hands out connections.
/// A process that is merely busy keeps pinging; one whose threads are all stuck stops, so systemd
/// (`WatchdogSec=`) restarts it.
final class ServiceHealth: Sendable {
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
    /// When each pool's progress counter last moved (or its queue was last empty), under the mutex.
    private let marks = Mutex(Marks())

    /// What `marks` guards.
    private struct Marks {
        var handler: (started: Int, at: Double)?
        var database: (handedOut: Int, at: Double)?
    }

    /// Thresholds in seconds.
    init(loopStaleAfter: Double, progressStaleAfter: Double) {
        self.loopStaleAfter = loopStaleAfter
        self.progressStaleAfter = progressStaleAfter
    }

    /// What is wrong with `sample` taken at `now` (monotonic seconds): empty when healthy.
    func problems(_ sample: Sample, now: Double) -> [String] {
        marks.withLock { marks in problems(sample, now: now, marks: &marks) }
    }

    private func problems(_ sample: Sample, now: Double, marks: inout Marks) -> [String] {
        var problems: [String] = []
        if sample.oldestLoopTurnAge > loopStaleAfter {
            problems.append("an event loop has not turned for \(String(format: "%.1f", sample.oldestLoopTurnAge)) s")
        }
        // The clock of "no progress" starts when the counter last moved or the queue was last empty.
        if marks.handler == nil || marks.handler!.started != sample.startedHandlers || sample.queuedHandlers == 0 {
            marks.handler = (sample.startedHandlers, now)
        } else if now - marks.handler!.at > progressStaleAfter {
            problems.append(
                "\(sample.queuedHandlers) handler jobs queued and none started for \(Int(now - marks.handler!.at)) s")
        }
        if marks.database == nil || marks.database!.handedOut != sample.databaseHandedOut || sample.databaseWaiting == 0
        {
            marks.database = (sample.databaseHandedOut, now)
        } else if now - marks.database!.at > progressStaleAfter {
            problems.append(
                "\(sample.databaseWaiting) callers waiting for a database connection and none handed out for \(Int(now - marks.database!.at)) s"
            )
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
