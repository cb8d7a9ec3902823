import Foundation
import Postgres
import Synchronization

/// `galleryd-bench db --url URL [--clients 8] [--seconds 10] [--max-id N] [--sql SQL]`: runs
/// primary-key SELECTs through a `PostgresPool` of `clients` connections from `clients` threads and
/// prints queries per second. bench/db.sh runs it beside `pgbench -S -M prepared` on the same table.
enum DBBench {
    static func run(_ arguments: [String]) {
        var url = ProcessInfo.processInfo.environment["DATABASE_URL"] ?? ""
        var clients = 8
        var seconds = 10.0
        var maxID: Int?
        var sql = "select abalance from pgbench_accounts where aid = $1"
        var rest = arguments[...]
        while let flag = rest.popFirst() {
            guard let value = rest.popFirst() else { usage("\(flag) needs a value") }
            switch flag {
            case "--url": url = value
            case "--clients": clients = Int(value) ?? 0
            case "--seconds": seconds = Double(value) ?? 0
            case "--max-id": maxID = Int(value)
            case "--sql": sql = value
            default: usage("unknown option \(flag)")
            }
        }
        guard !url.isEmpty, clients > 0, seconds > 0 else {
            usage("--url, a positive --clients and --seconds are required")
        }

        let pool = PostgresPool(configuration: PostgresPoolConfiguration(url: url, size: clients, acquireTimeout: 30))
        do {
            let rows = try maxID ?? pool.query("select max(aid) as n from pgbench_accounts")[0].decode(Int.self, "n")
            // Open every connection and prepare the statement before the clock starts, like pgbench.
            try warmUp(pool, clients: clients, sql: sql)
            let (queries, errors) = measure(pool, clients: clients, seconds: seconds, sql: sql, rows: rows)
            let rate = Double(queries) / seconds
            print("db: \(queries) queries, \(errors) errors in \(seconds) s with \(clients) clients")
            print(String(format: "qps: %.0f", rate))
            exit(errors == 0 ? 0 : 1)
        } catch {
            FileHandle.standardError.write(Data("galleryd-bench db: \(error)\n".utf8))
            exit(1)
        }
    }

    /// Holds all `clients` connections at once (nested), so each one opens and prepares `sql`.
    private static func warmUp(_ pool: PostgresPool, clients: Int, sql: String) throws {
        guard clients > 0 else { return }
        try pool.withConnection { connection in
            _ = try connection.query(sql, [1])
            try warmUp(pool, clients: clients - 1, sql: sql)
        }
    }

    private static func measure(_ pool: PostgresPool, clients: Int, seconds: Double, sql: String, rows: Int) -> (
        Int, Int
    ) {
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(seconds * 1e9)
        let totals = Totals()
        let group = DispatchGroup()
        for _ in 0..<clients {
            group.enter()
            let thread = Thread {
                var generator = SystemRandomNumberGenerator()
                var queries = 0
                var errors = 0
                while DispatchTime.now().uptimeNanoseconds < deadline {
                    do {
                        let result = try pool.query(sql, [Int.random(in: 1...rows, using: &generator)])
                        if result.count == 1 { _ = try result[0].decode(Int.self, 0) }
                        queries += 1
                    } catch {
                        errors += 1
                    }
                }
                totals.add(queries: queries, errors: errors)
                group.leave()
            }
            thread.start()
        }
        group.wait()
        return (totals.queries, totals.errors)
    }

    /// Per-thread counts, summed once at the end of each thread.
    private final class Totals: Sendable {
        private let counts = Mutex((queries: 0, errors: 0))

        var queries: Int { counts.withLock { $0.queries } }
        var errors: Int { counts.withLock { $0.errors } }

        func add(queries: Int, errors: Int) {
            counts.withLock { counts in
                counts.queries += queries
                counts.errors += errors
            }
        }
    }

    private static func usage(_ problem: String) -> Never {
        FileHandle.standardError.write(
            Data(
                "galleryd-bench db: \(problem)\nusage: galleryd-bench db --url URL [--clients 8] [--seconds 10] [--max-id N] [--sql SQL]\n"
                    .utf8))
        exit(2)
    }
}
