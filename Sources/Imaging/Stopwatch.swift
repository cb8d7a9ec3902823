import Foundation

/// Monotonic milliseconds for the per-stage timings the pipeline reports.
struct Stopwatch {
    private var last: UInt64 = Stopwatch.nanoseconds()
    private(set) var laps: [(stage: String, milliseconds: Double)] = []

    /// Nanoseconds on the monotonic clock.
    static func nanoseconds() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
    }

    /// Records the time since the previous lap under `stage`.
    mutating func lap(_ stage: String) {
        let now = Stopwatch.nanoseconds()
        laps.append((stage, Double(now - last) / 1e6))
        last = now
    }

    /// Records an already measured duration and restarts the lap clock.
    mutating func record(_ stage: String, nanoseconds: UInt64) {
        laps.append((stage, Double(nanoseconds) / 1e6))
        last = Stopwatch.nanoseconds()
    }
}
