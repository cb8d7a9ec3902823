import Crypto
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
///
/// A record is kept under the SHA-256 of its scope (which names the caller, session token
/// included) and request id, never the scope itself: neither the table nor a backup of it holds a
/// token. Expired records are deleted on a timer (`cleanupInterval`), whether or not creates come.
// @unchecked: `entries` and `order` are guarded by `condition` (a run of a key waits for another, which Mutex cannot do).
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
    /// Deletes expired durable records every `cleanupInterval` seconds; nil without a pool.
    private let cleanup: Heartbeat?

    private enum Entry {
        case running
        case done(ParseAPI.Result, expires: Date)
    }

    private let condition = NSCondition()
    private var entries: [String: Entry] = [:]
    private var order: [(key: String, expires: Date)] = []

    /// With a pool, expired records are deleted every `cleanupInterval` seconds (a minute: a record
    /// outlives its TTL by at most that) until `stop()`.
    init(pool: PostgresPool? = nil, ttl: TimeInterval = 300, capacity: Int = 10_000, cleanupInterval: TimeInterval = 60)
    {
        self.pool = pool
        let records = pool.map { RequestIdRepository(pool: $0) }
        self.records = records
        self.ttl = ttl
        self.capacity = capacity
        // A failed deletion (the database away for a moment) is tried again at the next beat.
        cleanup = records.map { records in
            Heartbeat(interval: cleanupInterval) {
                try? records.deleteExpired()
                return true
            }
        }
    }

    /// Stops the cleanup timer (before the pool closes); returns after a deletion in progress.
    func stop() {
        cleanup?.stop()
    }

    /// What a run is remembered under, in memory and in `request_ids`: the SHA-256 (hex) of the
    /// scope and the request id, so the session token in the scope is never stored.
    static func recordKey(scope: String, requestId: String) -> String {
        SHA256BodyObserver.hex(SHA256.hash(data: Array((scope + "\n" + requestId).utf8)))
    }

    /// Runs `body` once for `requestId` under `scope` (method and path) within the TTL; without an
    /// id (or with an unusable one) it just runs `body`. With `durable`, `body` runs in one database
    /// transaction with the record of its answer, so it must do all its work through the pool
    /// (whose calls join that transaction) and nothing a rollback cannot undo.
    func run(
        requestId: String?, scope: String, durable: Bool = false, _ body: () throws -> ParseAPI.Result
    ) throws -> ParseAPI.Result {
        guard let requestId, !requestId.isEmpty, requestId.utf8.count <= Self.maxIdLength else { return try body() }
        let key = Self.recordKey(scope: scope, requestId: requestId)
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
        try pool.sharingTransaction {
            try records.lock(key)
            if let answer = try records.answer(for: key) {
                return ParseAPI.Result(
                    status: HTTPStatus(answer.status, answer.reason), json: answer.json, location: answer.location)
            }
            let result = try body()
            try records.record(
                RequestIdRepository.Answer(
                    status: result.status.code, reason: result.status.reason, json: result.json,
                    location: result.location),
                for: key, ttl: ttl)
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
