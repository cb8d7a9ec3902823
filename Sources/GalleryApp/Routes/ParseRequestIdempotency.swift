import Foundation

/// Parse Server's idempotency key: a create sent again with the same `X-Parse-Request-Id`
/// (an SDK retrying after a lost answer) within `ttl` gets the first answer back instead of
/// making a second object. A repeat that arrives while the first is still running waits for it.
/// Only successful answers are kept, so a retry after an error runs again. Kept in memory, per
/// process, bounded to `capacity` ids (the oldest go first).
final class ParseRequestIdempotency: @unchecked Sendable {
    /// How long an answer is replayed (Parse Server's default idempotency TTL: 300 s).
    let ttl: TimeInterval
    /// The most ids remembered at once.
    let capacity: Int
    /// The longest a request id may be (longer ones are not remembered).
    static let maxIdLength = 256

    private enum Entry {
        case running
        case done(ParseAPI.Result, expires: Date)
    }

    private let condition = NSCondition()
    private var entries: [String: Entry] = [:]
    private var order: [(key: String, expires: Date)] = []

    init(ttl: TimeInterval = 300, capacity: Int = 10_000) {
        self.ttl = ttl
        self.capacity = capacity
    }

    /// Runs `body` once for `requestId` under `scope` (method and path) within the TTL; without an
    /// id (or with an unusable one) it just runs `body`.
    func run(requestId: String?, scope: String, _ body: () throws -> ParseAPI.Result) throws -> ParseAPI.Result {
        guard let requestId, !requestId.isEmpty, requestId.utf8.count <= Self.maxIdLength else { return try body() }
        let key = scope + "\u{0}" + requestId
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
            result = try body()
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
