import Foundation

/// Runs an action every `interval` seconds on its own queue until stopped: a running job's lease
/// renewal. `stop()` waits for an action in progress, so nothing renews a job after it finished.
final class Heartbeat: @unchecked Sendable {
    private let timer: DispatchSourceTimer
    private let queue = DispatchQueue(label: "galleryd.heartbeat")
    private var stopped = false

    /// Starts beating: the first action runs after one `interval`.
    init(interval: Double, action: @escaping @Sendable () -> Void) {
        timer = DispatchSource.makeTimerSource(queue: queue)
        let interval = max(0.05, interval)
        timer.schedule(deadline: .now() + interval, repeating: interval, leeway: .milliseconds(50))
        timer.setEventHandler(handler: action)
        timer.resume()
    }

    /// Stops the beats; returns after any action in progress has finished. Safe to call twice.
    func stop() {
        queue.sync {
            guard !stopped else { return }
            stopped = true
            timer.cancel()
        }
    }

    deinit { stop() }
}
