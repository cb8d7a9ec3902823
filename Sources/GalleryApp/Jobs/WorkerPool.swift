import BlobStore
import Foundation
import Imaging
import Logging
import Postgres

/// Threads that take derivatives jobs from the queue: woken by `NOTIFY` on the jobs channel and
/// polling as a fallback (a missed notification or a lease that expired). One of them also
/// purges the trash past its retention period and, while the queue is empty, fills in what old
/// photos lack (`Backfill`: their ThumbHash, their camera).
// @unchecked: its state is guarded by `condition` (idle workers wait on it for a wake-up, which Mutex cannot do).
public final class WorkerPool: @unchecked Sendable {
    /// What the pool needs to run.
    public struct Settings: Sendable {
        /// Worker threads.
        public var threads: Int
        /// Seconds between polls when no notification arrives.
        public var pollInterval: Double = 2
        /// Days a trashed row is kept.
        public var trashRetentionDays: Int
        /// Seconds between trash purges (and orphan collections).
        public var purgeInterval: Double = 3600
        /// Hours an upload may wait to be attached to a photo before the orphan collector removes it.
        public var orphanGraceHours = 24
        /// Seconds between sweeps of abandoned temporary files in the store.
        public var tmpSweepInterval: Double = 600
        /// Age in seconds (since the last write) at which a temporary file counts as abandoned.
        public var tmpSweepAge: Double = 3600

        public init(threads: Int, trashRetentionDays: Int) {
            self.threads = threads
            self.trashRetentionDays = trashRetentionDays
        }
    }

    let settings: Settings
    let queue: JobQueue
    let processor: PhotoProcessor
    let trash: TrashService
    let databaseURL: String
    let logger: Logger
    let metrics: GalleryMetrics?
    /// Passes over old photos run between jobs (worker 0, when the queue is empty), in order.
    let backfills: [any Backfill]
    private let condition = NSCondition()
    private var running = false
    private var wakeups = 0
    private var threads: [Thread] = []
    private var finished = 0
    private var listener: PostgresListener?
    private let identity = "\(ProcessInfo.processInfo.hostName):\(getpid())"

    public init(
        settings: Settings, queue: JobQueue, processor: PhotoProcessor, trash: TrashService, databaseURL: String,
        logger: Logger, metrics: GalleryMetrics?, backfills: [any Backfill] = []
    ) {
        self.settings = settings
        self.queue = queue
        self.processor = processor
        self.trash = trash
        self.databaseURL = databaseURL
        self.logger = logger
        self.metrics = metrics
        self.backfills = backfills
    }

    /// Starts the listener and the worker threads.
    public func start() {
        condition.lock()
        guard !running else {
            condition.unlock()
            return
        }
        running = true
        condition.unlock()
        // Notifications sent while the listener was (re)connecting are lost, so each time it is
        // listening again the workers rescan the queue.
        listener = PostgresListener(
            url: databaseURL, channels: [JobQueue.channel], onListen: { [weak self] in self?.wake() }
        ) { [weak self] _, _ in
            self?.wake()
        }
        for index in 0..<settings.threads {
            let thread = Thread { [self] in self.loop(index: index) }
            thread.name = "galleryd-worker-\(index)"
            thread.start()
            threads.append(thread)
        }
        logger.info("workers started", metadata: ["threads": "\(settings.threads)"])
    }

    /// Wakes an idle worker to look for jobs.
    public func wake() {
        condition.lock()
        wakeups += 1
        condition.broadcast()
        condition.unlock()
    }

    /// Stops taking jobs and waits until every worker has finished its current one.
    public func stop() {
        listener?.stop()
        condition.lock()
        running = false
        condition.broadcast()
        while finished < threads.count { _ = condition.wait(until: Date().addingTimeInterval(0.5)) }
        condition.unlock()
    }

    /// Runs jobs until none is due; returns how many were run. Tests and `galleryd worker --once` use it.
    @discardableResult
    public func drain() -> Int {
        var count = 0
        while (try? runOne(worker: identity + "/drain")) == true { count += 1 }
        return count
    }

    private func loop(index: Int) {
        let worker = "\(identity)/\(index)"
        var lastPurge = Date.distantPast
        var lastSweep = Date()  // the application swept at start
        while isRunning {
            if index == 0, Date().timeIntervalSince(lastPurge) >= settings.purgeInterval {
                lastPurge = Date()
                do { _ = try trash.purge(olderThanDays: settings.trashRetentionDays) } catch {
                    logger.error("trash purge failed: \(error)")
                }
                collectOrphans()
            }
            if index == 0, Date().timeIntervalSince(lastSweep) >= settings.tmpSweepInterval {
                lastSweep = Date()
                sweepTemporaryFiles()
            }
            var didWork: Bool
            do {
                didWork = try runOne(worker: worker)
            } catch {
                logger.error("worker \(worker): \(error)")
                didWork = false
            }
            if !didWork, index == 0, let backfill = backfills.first(where: { !$0.isFinished }) {
                do { didWork = try backfill.runBatch() > 0 } catch { logger.error("\(backfill.name): \(error)") }
            }
            if !didWork { idle() }
        }
        condition.lock()
        finished += 1
        condition.broadcast()
        condition.unlock()
    }

    private var isRunning: Bool {
        condition.lock()
        defer { condition.unlock() }
        return running
    }

    private func idle() {
        condition.lock()
        if running && wakeups == 0 {
            _ = condition.wait(until: Date().addingTimeInterval(settings.pollInterval))
        }
        wakeups = max(0, wakeups - 1)
        condition.unlock()
    }

    /// Removes the store's abandoned temporary files (`LocalBlobStore.sweepTemporaryFiles`: those of
    /// a process that died, and any nobody has written to for `tmpSweepAge`): what start-up does,
    /// again every `tmpSweepInterval`. Returns how many were removed.
    @discardableResult
    public func sweepTemporaryFiles() -> Int {
        let removed = processor.spool.sweepTemporaryFiles(olderThan: settings.tmpSweepAge)
        if removed > 0 { logger.notice("removed abandoned temporary files", metadata: ["count": "\(removed)"]) }
        return removed
    }

    /// Claims and runs one job. Returns false when no job was due. While the job runs, a timer
    /// renews its lease every third of the lease time (the heartbeat), so a short lease is enough
    /// for a long job and a worker that dies loses the job within one lease.
    func runOne(worker: String) throws -> Bool {
        guard let claim = try queue.claim(worker: worker) else { return false }
        let started = Date()
        metrics?.jobsRunning.add(1)
        defer { metrics?.jobsRunning.add(-1) }
        let heartbeat = Heartbeat(interval: Double(queue.leaseSeconds) / 3) { [queue, logger] in
            do {
                if try queue.renew(claim, worker: worker) { return true }
                // Taken by another worker, or the photo was purged: no renewal can succeed again
                // (the finishing transaction notices too), so stop instead of warning every beat.
                logger.warning("lost the lease on a running job", metadata: ["objectId": "\(claim.photoId)"])
                return false
            } catch {
                logger.warning("lease renewal failed: \(error)", metadata: ["objectId": "\(claim.photoId)"])
                return true
            }
        }
        defer { heartbeat.stop() }
        do {
            let outcome = try processor.process(claim, queue: queue, worker: worker)
            let seconds = Date().timeIntervalSince(started)
            for timing in outcome.timings {
                metrics?.processingSeconds.observe(timing.milliseconds / 1000, timing.stage)
            }
            metrics?.processingSeconds.observe(seconds, "total")
            metrics?.jobsFinished.increment(1, "done")
            logger.info(
                "processed photo",
                metadata: [
                    "objectId": "\(claim.photoId)", "attempt": "\(claim.attempt)",
                    "ms": "\(Int(seconds * 1000))",
                ])
        } catch {
            heartbeat.stop()
            let fault = JobFault.classify(error)
            let final = fault == .permanent || (fault == .retryable && claim.attempt >= claim.maxAttempts)
            metrics?.jobsFinished.increment(1, final ? "failed" : "retry")
            logger.warning(
                "processing failed",
                metadata: [
                    "objectId": "\(claim.photoId)", "attempt": "\(claim.attempt)/\(claim.maxAttempts)",
                    "fault": "\(fault)", "error": "\(error)",
                ])
            try queue.fail(claim, worker: worker, reason: "\(error)", fault: fault)
        }
        return true
    }
}
