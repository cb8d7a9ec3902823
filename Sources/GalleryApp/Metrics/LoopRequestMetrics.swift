import HTTPServer
import Synchronization

/// One event loop's request metrics (`GalleryMetrics.makeLoopRecorder`): per (route, method,
/// status) a duration histogram whose count is the request count, and the response bytes, each
/// written by that loop alone — a load and a store, no locked add, no thread-local lookup, no
/// cache line shared with another loop. A scrape (`LoopRequestRecorders.fold`) adds what each loop
/// counted since the last scrape to the registry's series, so `/metrics` shows every loop's sum
/// and never goes down (decision 041, round 8).
// @unchecked: `last*` are touched by the owning loop only; the counts are atomics the loop alone
// writes and the fold reads; `series` is under its mutex; `foldedBytes` under the recorders' lock.
final class LoopRequestMetrics: HTTPLoopRecorder, @unchecked Sendable {
    private let table: GalleryMetrics.RequestSeriesTable
    /// The duration bounds in nanoseconds, as the histogram's bounds in seconds.
    private let boundsNanoseconds: [Int]
    /// This loop's series, by key: taken by the loop when it meets a new key, and by the fold.
    private let series = Mutex<[GalleryMetrics.RequestKey: LoopRequestSeries]>([:])
    /// Response body bytes this loop sent.
    private let bytes = Atomic<Int>(0)
    /// The bytes already added to the registry by earlier folds.
    var foldedBytes = 0

    private var lastSeries: LoopRequestSeries?
    private var lastRoute = ""
    /// The method token as sent (not its label), so another unknown method is looked up again.
    private var lastMethod = ""
    private var lastStatus = 0

    init(table: GalleryMetrics.RequestSeriesTable, bounds: [Double]) {
        self.table = table
        boundsNanoseconds = bounds.map { Int(min(max(0, $0 * 1e9), 9e18).rounded()) }
    }

    func requestFinished(method: HTTPMethod, routePattern: String, status: Int, nanoseconds: Int, bytesSent: Int) {
        let found: LoopRequestSeries
        if let last = lastSeries, lastStatus == status, lastRoute == routePattern, lastMethod == method.rawValue {
            found = last
        } else {
            found = lookUp(method: method, route: routePattern, status: status)
        }
        found.record(nanoseconds: nanoseconds, bounds: boundsNanoseconds)
        bytes.store(bytes.load(ordering: .relaxed) &+ max(0, bytesSent), ordering: .relaxed)
    }

    /// The series of a key this loop did not see last, made (with the registry's series it folds
    /// into) the first time; remembered as the last.
    private func lookUp(method: HTTPMethod, route: String, status: Int) -> LoopRequestSeries {
        let key = GalleryMetrics.RequestKey(route: route, method: GalleryMetrics.methodLabel(method), status: status)
        let found = series.withLock { series in
            if let existing = series[key] { return existing }
            let made = LoopRequestSeries(shared: table.series(key), bucketCount: boundsNanoseconds.count + 1)
            series[key] = made
            return made
        }
        lastSeries = found
        lastRoute = route
        lastMethod = method.rawValue
        lastStatus = status
        return found
    }

    /// Adds what this loop counted since the last fold to the registry's series. Called under the
    /// recorders' lock only, so two scrapes never add the same requests twice.
    func fold(bytesInto bytesSeries: PrometheusCounter.Series) {
        for made in series.withLock({ Array($0.values) }) { made.fold() }
        let total = bytes.load(ordering: .relaxed)
        bytesSeries.increment(by: total - foldedBytes)
        foldedBytes = total
    }
}

/// One (route, method, status) of one loop: a count per duration bucket (their total is the
/// request count) and the sum of durations in nanoseconds.
// @unchecked: `counts` points to atomics made in init and freed in deinit, written by one loop and
// read by the fold; `folded` and `foldedSum` are touched under the recorders' lock only.
final class LoopRequestSeries: @unchecked Sendable {
    /// The registry's series the fold adds to.
    let shared: GalleryMetrics.RequestSeries
    private let bucketCount: Int
    private let counts: UnsafeMutablePointer<Atomic<Int>>
    private let sumNanoseconds = Atomic<Int>(0)
    private var folded: [Int]
    private var foldedSum = 0

    init(shared: GalleryMetrics.RequestSeries, bucketCount: Int) {
        self.shared = shared
        self.bucketCount = bucketCount
        counts = .allocate(capacity: bucketCount)
        for i in 0..<bucketCount { (counts + i).initialize(to: Atomic(0)) }
        folded = Array(repeating: 0, count: bucketCount)
    }

    deinit {
        counts.deinitialize(count: bucketCount)
        counts.deallocate()
    }

    /// One request: the first bucket whose bound is at least its duration, and the sum. By the
    /// owning loop only: a relaxed load and store, as no other thread writes these.
    @inline(__always)
    func record(nanoseconds: Int, bounds: [Int]) {
        var bucket = 0
        while bucket < bounds.count && bounds[bucket] < nanoseconds { bucket += 1 }
        let count = counts + bucket
        count.pointee.store(count.pointee.load(ordering: .relaxed) &+ 1, ordering: .relaxed)
        sumNanoseconds.store(sumNanoseconds.load(ordering: .relaxed) &+ max(0, nanoseconds), ordering: .relaxed)
    }

    /// Adds the requests recorded since the last fold to the registry's counter and histogram.
    func fold() {
        var requests = 0
        for bucket in 0..<bucketCount {
            let now = counts[bucket].load(ordering: .relaxed)
            let added = now - folded[bucket]
            if added > 0 {
                shared.duration.histogram.add(count: added, toBucket: bucket)
                requests += added
            }
            folded[bucket] = now
        }
        let sum = sumNanoseconds.load(ordering: .relaxed)
        shared.duration.histogram.add(sumBillionths: Int64(sum - foldedSum))
        foldedSum = sum
        if requests > 0 { shared.requests.increment(by: requests) }
    }
}

/// Every loop recorder a `GalleryMetrics` made, kept for its lifetime (a server's loops are made
/// once per start), so a scrape sums every loop that ever counted and the sums only grow.
final class LoopRequestRecorders: Sendable {
    private let recorders = Mutex<[LoopRequestMetrics]>([])
    private let bytesSeries: PrometheusCounter.Series

    init(bytesSeries: PrometheusCounter.Series) { self.bytesSeries = bytesSeries }

    /// Keeps `recorder` for the folds.
    func add(_ recorder: LoopRequestMetrics) { recorders.withLock { $0.append(recorder) } }

    /// Adds every loop's new counts to the registry (before each render and each read of a value).
    func fold() {
        recorders.withLock { recorders in
            for recorder in recorders { recorder.fold(bytesInto: bytesSeries) }
        }
    }
}
