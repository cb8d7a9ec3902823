import Foundation
import Postgres

/// The `jobs` table as a queue: claiming with `FOR UPDATE SKIP LOCKED` and a lease, finishing,
/// and retrying with exponential backoff. A job whose lease expired (its worker died) is claimable again.
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

    let pool: PostgresPool
    /// Seconds a claim lasts.
    public var leaseSeconds: Int
    /// First retry delay, in milliseconds.
    public var retryBaseMs: Int
    /// Attempts before a job fails for good (applied to new claims' rows).
    public var maxAttempts: Int

    public init(pool: PostgresPool, leaseSeconds: Int, retryBaseMs: Int, maxAttempts: Int) {
        self.pool = pool
        self.leaseSeconds = leaseSeconds
        self.retryBaseMs = retryBaseMs
        self.maxAttempts = maxAttempts
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
            update jobs set state = 'done', lease_until = null, last_error = null, updated_at = now()
            where id = $1 and locked_by = $2 and state = 'running'
            """, [claim.id, worker]).affectedRows == 1
    }

    /// Fails the jobs whose lease expired on their last attempt (their worker stopped or was
    /// killed each time), marking their photos failed with the reason. Returns how many.
    @discardableResult
    public func failAbandoned() throws -> Int {
        try pool.query(
            """
            with abandoned as (
                update jobs set state = 'failed', lease_until = null, updated_at = now(),
                       last_error = 'processing never finished: the worker stopped during each of '
                                    || attempts || ' attempts (lease expired)'
                                    || coalesce('; last error: ' || last_error, '')
                where state = 'running' and lease_until < now() and attempts >= $1
                returning photo_id, last_error)
            update photos set status = 'failed', error = abandoned.last_error
            from abandoned where photos.object_id = abandoned.photo_id
            """, [maxAttempts]).affectedRows
    }

    /// Records a failed attempt: schedules a retry with exponential backoff, or, after the last
    /// attempt or for a `permanent` failure (one a retry cannot fix, such as a corrupt image),
    /// fails the job and marks the photo failed with the reason.
    public func fail(_ claim: Claim, worker: String, reason: String, permanent: Bool = false) throws {
        let reason = String(reason.prefix(2000))
        try pool.transaction { connection in
            if permanent || claim.attempt >= claim.maxAttempts {
                let updated = try connection.query(
                    """
                    update jobs set state = 'failed', lease_until = null, last_error = $3, updated_at = now()
                    where id = $1 and locked_by = $2 and state = 'running'
                    """, [claim.id, worker, reason])
                if updated.affectedRows == 1 {
                    try connection.query(
                        "update photos set status = 'failed', error = $2 where object_id = $1", [claim.photoId, reason])
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

    /// Jobs by state, for metrics and /ready.
    public func counts() throws -> [String: Int] {
        var counts = ["queued": 0, "running": 0, "failed": 0]
        for row in try pool.query(
            "select state, count(*)::bigint as n from jobs where state <> 'done' group by state") {
            counts[try row.decode(String.self, "state")] = try row.decode(Int.self, "n")
        }
        return counts
    }
}
