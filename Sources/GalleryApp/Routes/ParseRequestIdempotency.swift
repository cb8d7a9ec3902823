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
    /// The statements of those records.
    private let records: RequestIdRepository?
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
        self.records = pool.map { RequestIdRepository(pool: $0) }
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
            if durable, let pool, let records {
                result = try runRecorded(key, on: pool, records: records, body)
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
        _ key: String, on pool: PostgresPool, records: RequestIdRepository, _ body: () throws -> ParseAPI.Result
    ) throws -> ParseAPI.Result {
        let cleanup = condition.withLock { () -> Bool in
            recorded += 1
            return recorded % Self.recordsPerCleanup == 0
        }
        return try pool.sharingTransaction {
            try records.lock(key)
            if let answer = try records.answer(for: key) {
                return ParseAPI.Result(
                    status: HTTPStatus(answer.status, answer.reason), json: answer.json, location: answer.location)
            }
            let result = try body()
            try records.record(
                RequestIdRepository.Answer(
                    status: result.status.code, reason: result.status.reason, json: result.json, location: result.location),
                for: key, ttl: ttl)
            if cleanup { try records.deleteExpired() }
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
