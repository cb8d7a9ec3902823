import Foundation

/// Runs an action every `interval` seconds on its own queue until stopped, or until the action
/// says there is no point going on: a running job's lease renewal, which cannot succeed again once
/// the lease is lost. `stop()` waits for an action in progress, so nothing renews a job after it finished.
// @unchecked: `stopped` and the timer are touched only on `queue`.
final class Heartbeat: @unchecked Sendable {
    private let timer: DispatchSourceTimer
    private let queue = DispatchQueue(label: "galleryd.heartbeat")
    private var stopped = false

    /// Starts beating: the first action runs after one `interval`; an action returning false is the last.
    init(interval: Double, action: @escaping @Sendable () -> Bool) {
        timer = DispatchSource.makeTimerSource(queue: queue)
        let interval = max(0.05, interval)
        timer.schedule(deadline: .now() + interval, repeating: interval, leeway: .milliseconds(50))
        timer.setEventHandler { [unowned self] in
            // On `queue`, as `stop()` runs its part: no action after a stop, none after a false.
            guard !self.stopped, action() else { return self.finish() }
        }
        timer.resume()
    }

    /// Stops the timer; called on `queue`.
    private func finish() {
        guard !stopped else { return }
        stopped = true
        timer.cancel()
    }

    /// Stops the beats; returns after any action in progress has finished. Safe to call twice.
    func stop() {
        queue.sync { finish() }
    }

    deinit { stop() }
}
