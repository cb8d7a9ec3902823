import Synchronization

/// One histogram series whose observations take no lock: a relaxed atomic count per bucket
/// (not cumulative: an observation adds to one bucket only) and the sum in billionths, both
/// atomics. The request histogram is observed by every event loop on every request; swift-
/// prometheus' `Histogram` takes a lock and walks every bucket there (decision 041). A scrape
/// adds the buckets up, so counts and sum may be a few observations apart while requests finish.
// @unchecked: `counts` points to atomics made in init and freed in deinit; only atomic operations touch them.
final class AtomicHistogram: @unchecked Sendable {
    /// The upper bounds, ascending (the `+Inf` bucket is implied).
    let bounds: [Double]
    /// `bounds.count + 1` counts, the last for observations above every bound.
    private let counts: UnsafeMutablePointer<Atomic<Int>>
    /// The sum of observations in billionths (nanoseconds for durations in seconds).
    private let sumBillionths = Atomic<Int64>(0)

    /// A series with these upper bounds (sorted ascending by the registry).
    init(bounds: [Double]) {
        self.bounds = bounds
        counts = .allocate(capacity: bounds.count + 1)
        for i in 0...bounds.count { (counts + i).initialize(to: Atomic(0)) }
    }

    deinit {
        counts.deinitialize(count: bounds.count + 1)
        counts.deallocate()
    }

    /// Records one observation: the first bucket whose bound is at least `value`, and the sum.
    func observe(_ value: Double) {
        var bucket = 0
        while bucket < bounds.count && bounds[bucket] < value { bucket += 1 }
        counts[bucket].wrappingAdd(1, ordering: .relaxed)
        let billionths = value * 1e9
        if billionths.isFinite && abs(billionths) < 9e18 {
            sumBillionths.wrappingAdd(Int64(billionths.rounded()), ordering: .relaxed)
        }
    }

    /// Adds `count` observations to one bucket (`bounds.count` for the one above every bound):
    /// counts kept apart, per event loop, added at a scrape.
    func add(count: Int, toBucket bucket: Int) {
        counts[bucket].wrappingAdd(count, ordering: .relaxed)
    }

    /// Adds `billionths` to the sum (with `add(count:toBucket:)`).
    func add(sumBillionths billionths: Int64) {
        sumBillionths.wrappingAdd(billionths, ordering: .relaxed)
    }

    /// The cumulative count at each bound, then the total (the `+Inf` bucket), and the sum.
    func snapshot() -> (cumulative: [Int], sum: Double) {
        var cumulative: [Int] = []
        cumulative.reserveCapacity(bounds.count + 1)
        var total = 0
        for i in 0...bounds.count {
            total += counts[i].load(ordering: .relaxed)
            cumulative.append(total)
        }
        return (cumulative, Double(sumBillionths.load(ordering: .relaxed)) / 1e9)
    }

    /// The series in the Prometheus text format (`_bucket` per bound and `+Inf`, `_sum`, `_count`),
    /// as swift-prometheus writes its histograms: bounds and sum as Swift prints a `Double`.
    /// `labels` are the series' labels already rendered (`route="/a"`), or empty.
    func render(name: String, labels: String, into out: inout String) {
        let (cumulative, sum) = snapshot()
        let prefix = labels.isEmpty ? "" : labels + ","
        for (i, bound) in bounds.enumerated() {
            out += "\(name)_bucket{\(prefix)le=\"\(bound)\"} \(cumulative[i])\n"
        }
        let total = cumulative[bounds.count]
        out += "\(name)_bucket{\(prefix)le=\"+Inf\"} \(total)\n"
        let braced = labels.isEmpty ? "" : "{\(labels)}"
        out += "\(name)_sum\(braced) \(sum)\n"
        out += "\(name)_count\(braced) \(total)\n"
    }
}
