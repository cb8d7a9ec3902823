/// A bounded background pass that fills in what older photos lack (`ThumbHashBackfill`,
/// `CameraBackfill`): worker 0 runs one batch at a time while its queue is empty, never in a
/// request, until the pass reports itself finished (once per process).
public protocol Backfill: AnyObject, Sendable {
    /// What the pass fills in, for the worker's log lines.
    var name: String { get }
    /// Whether the pass has looked at every photo it had to (no more batches needed).
    var isFinished: Bool { get }
    /// Runs the next batch; returns how many photos it dealt with (0: nothing done, the worker
    /// idles until its next poll).
    func runBatch() throws -> Int
}
