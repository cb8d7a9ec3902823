import Foundation
import Postgres

/// The `jobs` table as a queue: claiming with `FOR UPDATE SKIP LOCKED` and a short lease that the
/// worker renews while it runs (`renew`), finishing, and retrying with exponential backoff. A job
/// whose lease expired (its worker died) is claimable again. Transient faults (see `JobFault`) back
/// off on their own schedule for hours without using up attempts; failed photos can be re-queued.
/// The photos' own status changes are `PhotoRepository`'s statements, run in the queue's transactions.
public struct JobQueue: Sendable {
    /// A claimed job.
    public struct Claim: Sendable {
        /// The job's id.
        public var id: Int64
        /// The photo to process.
        public var photoId: String
        /// This attempt's number (1 for the first).
        public var attempt: Int
        /// Attempts allowed before the photo is marked failed.
        public var maxAttempts: Int
    }

    /// The channel workers LISTEN on; enqueueing notifies it with the photo ids.
    public static let channel = "galleryd_jobs"

    let pool: PostgresPool
    let photos: PhotoRepository
    /// Seconds a claim lasts.
    public var leaseSeconds: Int
    /// First retry delay, in milliseconds.
    public var retryBaseMs: Int
    /// Attempts before a job fails for good (applied to new claims' rows).
    public var maxAttempts: Int
    /// Seconds a job keeps retrying after its first transient fault before it fails for good.
    public var transientRetrySeconds: Double = 24 * 3600
    /// Longest wait between retries after a transient fault, in seconds.
    public var transientMaxDelay: Double = 300
    /// Re-read after `requeueFailed` (re-queued photos are pending again, a visible change), so
    /// this server's next find sees it at once; nil where no finds are served (workers, commands).
    public var classChanges: ClassChangeSequences? = nil

    public init(pool: PostgresPool, leaseSeconds: Int, retryBaseMs: Int, maxAttempts: Int) {
        self.pool = pool
        photos = PhotoRepository(pool: pool)
        self.leaseSeconds = leaseSeconds
        self.retryBaseMs = retryBaseMs
        self.maxAttempts = maxAttempts
    }

    /// Extends the lease of a job this worker still holds (the heartbeat while it runs). Returns
    /// false when the worker no longer holds it (the lease ran out and another worker took it).
    @discardableResult
    public func renew(_ claim: Claim, worker: String) throws -> Bool {
        try pool.query(
            """
            update jobs set lease_until = now() + make_interval(secs => $3)
            where id = $1 and locked_by = $2 and state = 'running'
            """, [claim.id, worker, Double(leaseSeconds)]
        ).affectedRows == 1
    }

    /// Claims the next due job for `worker`, or nil when none is due. A job whose lease expired is
    /// claimed again only while it has attempts left; when none is due, jobs that used up their
    /// attempts under workers that died are failed (see `failAbandoned`), so a photo that kills its
    /// worker every time ends `failed` instead of being retried forever.
    public func claim(worker: String) throws -> Claim? {
        let rows = try pool.query(
            """
            update jobs set state = 'running', attempts = attempts + 1, max_attempts = $3,
                   lease_until = now() + make_interval(secs => $1), locked_by = $2, updated_at = now()
            where id = (
                select id from jobs
                where (state = 'queued' and run_at <= now())
                   or (state = 'running' and lease_until < now() and attempts < $3)
                order by run_at, id
                limit 1
                for update skip locked)
            returning id, photo_id, attempts, max_attempts
            """, [Double(leaseSeconds), worker, maxAttempts])
        guard let row = rows.first else {
            try failAbandoned()
            return nil
        }
        return Claim(
            id: try row.decode(Int64.self, "id"), photoId: try row.decode(String.self, "photo_id"),
            attempt: try row.decode(Int.self, "attempts"), maxAttempts: try row.decode(Int.self, "max_attempts"))
    }

    /// Marks the job done, in the caller's transaction. Returns false when this worker no longer
    /// holds it (its lease expired and another worker took it), so the caller rolls back.
    public func complete(_ claim: Claim, worker: String, on connection: PostgresConnection) throws -> Bool {
        try connection.query(
            """
            update jobs set state = 'done', lease_until = null, last_error = null, updated_at = now(),
                   transient_failures = 0, transient_since = null
            where id = $1 and locked_by = $2 and state = 'running'
            """, [claim.id, worker]
        ).affectedRows == 1
    }

    /// Fails the jobs whose lease expired on their last attempt (their worker stopped or was
    /// killed each time), marking their photos failed with the reason. Returns how many.
    @discardableResult
    public func failAbandoned() throws -> Int {
        try pool.transaction { connection in
            let abandoned = try connection.query(
                """
                update jobs set state = 'failed', lease_until = null, updated_at = now(),
                       last_error = 'processing never finished: the worker stopped during each of '
                                    || attempts || ' attempts (lease expired)'
                                    || coalesce('; last error: ' || last_error, '')
                where state = 'running' and lease_until < now() and attempts >= $1
                returning photo_id, last_error
                """, [maxAttempts]
            ).map { row in
                (photoId: try row.decode(String.self, "photo_id"), reason: try row.decode(String.self, "last_error"))
            }
            return try photos.markFailed(abandoned, on: connection)
        }
    }

    /// Records a failed attempt. A `.transient` fault re-queues the job after a delay that doubles
    /// from the retry base up to `transientMaxDelay`, without counting the attempt, for as long as
    /// `transientRetrySeconds` since its first transient fault. Otherwise: a retry with exponential
    /// backoff, or, after the last attempt or for a `.permanent` fault (a corrupt image), the job
    /// fails and the photo is marked failed with the reason.
    public func fail(_ claim: Claim, worker: String, reason: String, fault: JobFault = .retryable) throws {
        let reason = String(reason.prefix(2000))
        let finalReason =
            fault == .transient
            ? "gave up after transient faults for more than \(Int(transientRetrySeconds / 3600)) h; last: " + reason
            : reason
        try pool.transaction { connection in
            if fault == .transient {
                let requeued = try connection.query(
                    """
                    update jobs set state = 'queued', lease_until = null, locked_by = null, last_error = $3,
                           attempts = greatest(0, attempts - 1),
                           transient_failures = transient_failures + 1,
                           transient_since = coalesce(transient_since, now()),
                           run_at = now() + make_interval(secs => least($5::float8, $4::float8 * power(2, least(transient_failures, 30))))
                    where id = $1 and locked_by = $2 and state = 'running'
                      and coalesce(transient_since, now()) > now() - make_interval(secs => $6)
                    """,
                    [claim.id, worker, reason, Double(retryBaseMs) / 1000, transientMaxDelay, transientRetrySeconds])
                if requeued.affectedRows == 1 { return }
                // Lease lost (nothing below matches either), or transient faults for too long: fail it.
            }
            if fault != .retryable || claim.attempt >= claim.maxAttempts {
                let updated = try connection.query(
                    """
                    update jobs set state = 'failed', lease_until = null, last_error = $3, updated_at = now()
                    where id = $1 and locked_by = $2 and state = 'running'
                    """, [claim.id, worker, finalReason])
                if updated.affectedRows == 1 {
                    try photos.markFailed([(claim.photoId, finalReason)], on: connection)
                }
            } else {
                try connection.query(
                    """
                    update jobs set state = 'queued', lease_until = null, locked_by = null, last_error = $3,
                           run_at = now() + make_interval(secs => $4), updated_at = now()
                    where id = $1 and locked_by = $2 and state = 'running'
                    """, [claim.id, worker, reason, retryDelay(afterAttempt: claim.attempt)])
            }
        }
    }

    /// The delay before the next attempt, in seconds: base × 2^(attempt−1), capped at 10 minutes.
    public func retryDelay(afterAttempt attempt: Int) -> Double {
        min(600, Double(retryBaseMs) / 1000 * pow(2, Double(max(0, attempt - 1))))
    }

    /// Puts failed photos back in the queue with fresh attempts: the photos named (any that are
    /// failed), or every failed photo when `photoIds` is nil. Their status goes back to `pending`
    /// and the workers are woken. Returns the ids re-queued.
    @discardableResult
    public func requeueFailed(photoIds: [String]?) throws -> [String] {
        defer { classChanges?.refreshAfterWrite() }
        let ids = try pool.transaction { connection -> [String] in
            let ids = try photos.resetFailed(photoIds, on: connection)
            guard !ids.isEmpty else { return [] }
            try Self.requeue(ids, on: connection)
            return ids
        }
        return ids
    }

    /// Queues the photos' jobs afresh (state queued, due now, attempts and transient history
    /// cleared; created when missing) and notifies the workers, in the caller's transaction.
    static func requeue(_ photoIds: [String], on connection: PostgresConnection) throws {
        try connection.query(
            """
            insert into jobs (photo_id, kind)
            select unnest($1::text[]), 'derivatives'
            on conflict (photo_id, kind) do update
               set state = 'queued', attempts = 0, run_at = now(), lease_until = null, locked_by = null,
                   last_error = null, transient_failures = 0, transient_since = null
            """, [photoIds])
        try connection.query("select pg_notify($1, $2)", [channel, photoIds.joined(separator: ",")])
    }

    /// Queues a new photo's derivatives job (nothing when it already has one) and notifies the
    /// workers, in the caller's transaction, so the job exists exactly when the photo commits.
    static func enqueue(_ photoId: String, on connection: PostgresConnection) throws {
        try connection.query(
            "insert into jobs (photo_id, kind) values ($1, 'derivatives') on conflict (photo_id, kind) do nothing",
            [photoId])
        try connection.query("select pg_notify($1, $2)", [channel, photoId])
    }

    /// Jobs by state, for metrics and /ready.
    public func counts() throws -> [String: Int] {
        var counts = ["queued": 0, "running": 0, "failed": 0]
        for row in try pool.query(
            "select state, count(*)::bigint as n from jobs where state <> 'done' group by state", retry: .safe)
        {
            counts[try row.decode(String.self, "state")] = try row.decode(Int.self, "n")
        }
        return counts
    }
}
