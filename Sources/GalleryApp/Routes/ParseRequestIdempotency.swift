import Foundation
import HTTPServer
import Postgres

/// Parse Server's idempotency key: a create sent again with the same `X-Parse-Request-Id`
/// (an SDK retrying after a lost answer) within `ttl` gets the first answer back instead of
/// making a second object. A repeat that arrives while the first is still running waits for it.
/// Only successful answers are kept, so a retry after an error runs again.
///
/// Answers are kept in memory, per process, bounded to `capacity` ids (the oldest go first). A
/// durable run (a single create) also records its answer in `request_ids` in the same database
/// transaction as the object: when that COMMIT went through but its answer never reached the
/// client (the session dropped, a 503 saying the request may or may not have completed), the
/// retry finds the record, in this process or another instance, and gets the first answer back;
/// when it did not go through, neither did the record, and the retry runs again.
final class ParseRequestIdempotency: @unchecked Sendable {
    /// How long an answer is replayed (Parse Server's default idempotency TTL: 300 s).
    let ttl: TimeInterval
    /// The most ids remembered at once.
    let capacity: Int
    /// Where durable runs record their answers; nil keeps them in memory only.
    let pool: PostgresPool?
    /// The longest a request id may be (longer ones are not remembered).
    static let maxIdLength = 256
    /// Durable records between two deletions of expired ones.
    static let recordsPerCleanup = 100

    private enum Entry {
        case running
        case done(ParseAPI.Result, expires: Date)
    }

    private let condition = NSCondition()
    private var entries: [String: Entry] = [:]
    private var order: [(key: String, expires: Date)] = []
    private var recorded = 0

    init(pool: PostgresPool? = nil, ttl: TimeInterval = 300, capacity: Int = 10_000) {
        self.pool = pool
        self.ttl = ttl
        self.capacity = capacity
    }

    /// Runs `body` once for `requestId` under `scope` (method and path) within the TTL; without an
    /// id (or with an unusable one) it just runs `body`. With `durable`, `body` runs in one database
    /// transaction with the record of its answer, so it must do all its work through the pool
    /// (whose calls join that transaction) and nothing a rollback cannot undo.
    func run(
        requestId: String?, scope: String, durable: Bool = false, _ body: () throws -> ParseAPI.Result
    ) throws -> ParseAPI.Result {
        guard let requestId, !requestId.isEmpty, requestId.utf8.count <= Self.maxIdLength else { return try body() }
        // Newline-separated: header values and paths hold no newline (and PostgreSQL text no NUL).
        let key = scope + "\n" + requestId
        condition.lock()
        while true {
            expire(now: Date())
            switch entries[key] {
            case .done(let result, _)?:
                condition.unlock()
                return result
            case .running?:
                condition.wait()
                continue
            case nil:
                entries[key] = .running
            }
            break
        }
        condition.unlock()
        let result: ParseAPI.Result
        do {
            if durable, let pool {
                result = try runRecorded(key, on: pool, body)
            } else {
                result = try body()
            }
        } catch {
            condition.lock()
            entries[key] = nil
            condition.broadcast()
            condition.unlock()
            throw error
        }
        condition.lock()
        let expires = Date().addingTimeInterval(ttl)
        entries[key] = .done(result, expires: expires)
        order.append((key, expires))
        while order.count > capacity {
            let oldest = order.removeFirst()
            entries[oldest.key] = nil
        }
        condition.broadcast()
        condition.unlock()
        return result
    }

    /// `body` and the record of its answer in one transaction, or the answer recorded by an earlier
    /// run of the same key. Runs of one key wait for each other (an advisory lock), across instances.
    private func runRecorded(
        _ key: String, on pool: PostgresPool, _ body: () throws -> ParseAPI.Result
    ) throws -> ParseAPI.Result {
        let cleanup = condition.withLock { () -> Bool in
            recorded += 1
            return recorded % Self.recordsPerCleanup == 0
        }
        return try pool.sharingTransaction {
            try pool.query("select pg_advisory_xact_lock(hashtext($1))", [key])
            if let row = try pool.query(
                "select status, reason, body, location from request_ids where key = $1 and expires_at > now()", [key]
            ).first {
                return ParseAPI.Result(
                    status: HTTPStatus(try row.decode(Int.self, "status"), try row.decode(String.self, "reason")),
                    json: Array(try row.decode(String.self, "body").utf8), location: try row.decode(String?.self, "location"))
            }
            let result = try body()
            try pool.query(
                """
                insert into request_ids (key, status, reason, body, location, expires_at)
                values ($1, $2, $3, $4, $5, now() + make_interval(secs => $6))
                on conflict (key) do update set status = excluded.status, reason = excluded.reason, body = excluded.body,
                    location = excluded.location, expires_at = excluded.expires_at
                """,
                [key, result.status.code, result.status.reason, String(decoding: result.json, as: UTF8.self),
                 result.location, ttl])
            if cleanup { try pool.query("delete from request_ids where expires_at < now()") }
            return result
        }
    }

    /// Forgets answers past their TTL (entries expire in insertion order). Called with the lock held.
    private func expire(now: Date) {
        var dropped = 0
        while dropped < order.count, order[dropped].expires <= now {
            entries[order[dropped].key] = nil
            dropped += 1
        }
        if dropped > 0 { order.removeFirst(dropped) }
    }
}
