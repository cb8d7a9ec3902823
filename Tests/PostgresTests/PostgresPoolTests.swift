import Foundation
import Testing

@testable import Postgres

/// The pool: transactions, concurrency, the busy error, replacing dead connections.
@Suite struct PostgresPoolTests {
    private struct Boom: Error {}

    @Test func transaction_RollsBack_WhenBodyThrows() throws {
        try TestDatabase.withSchema { url in
            let pool = TestDatabase.pool(url)
            try pool.execute("create table r (i int)")
            #expect(throws: Boom.self) {
                try pool.transaction { connection in
                    try connection.query("insert into r values ($1)", [1])
                    throw Boom()
                }
            }
            try pool.transaction { try $0.query("insert into r values ($1)", [2]) }
            #expect(try pool.query("select array_agg(i)::bigint[] as a from r")[0].decode([Int].self, "a") == [2])
            #expect(pool.stats.inUse == 0)
        }
    }

    @Test func sharingTransaction_JoinsEveryCallOnThePool_AllOrNothing() throws {
        try TestDatabase.withSchema { url in
            let pool = TestDatabase.pool(url, size: 2)
            let other = TestDatabase.pool(url, size: 1)
            try pool.execute("create table r (i int primary key)")
            // Calls made through the pool (as services make them) join the one transaction: a
            // failure later rolls back what the earlier ones did, savepoints included.
            var seen: (inside: Int, outside: Int, inUse: Int) = (-1, -1, -1)
            do {
                try pool.sharingTransaction {
                    try pool.query("insert into r values ($1)", [1])
                    try pool.transaction { try $0.query("insert into r values ($1)", [2]) }
                    // Same session: the uncommitted rows are visible here, not to another pool.
                    seen = (
                        try pool.query("select count(*) from r")[0].decode(Int.self, 0),
                        try other.query("select count(*) from r")[0].decode(Int.self, 0), pool.stats.inUse
                    )
                    throw Boom()
                }
                Issue.record("sharingTransaction did not rethrow")
            } catch is Boom {}
            #expect(seen.inside == 2 && seen.outside == 0 && seen.inUse == 1, "\(seen)")
            #expect(try pool.query("select count(*) from r")[0].decode(Int.self, 0) == 0)
            // A failed statement inside a nested transaction only undoes its savepoint.
            try pool.sharingTransaction {
                try pool.query("insert into r values ($1)", [3])
                _ = try? pool.transaction { try $0.query("insert into r values ($1)", [3]) }
                try pool.query("insert into r values ($1)", [4])
            }
            #expect(
                try pool.query("select array_agg(i order by i)::bigint[] as a from r")[0].decode([Int].self, "a") == [
                    3, 4,
                ])
            #expect(pool.stats.inUse == 0)
        }
    }

    @Test func afterCommit_RunsOnceTheSharedTransactionCommits_AndNeverAfterARollback() throws {
        try TestDatabase.withSchema { url in
            let pool = TestDatabase.pool(url, size: 2)
            let other = TestDatabase.pool(url, size: 1)
            try pool.execute("create table r (i int primary key)")
            // What the action sees, read on another pool: the write only once it is committed.
            var seen: [Int] = []
            func count() throws -> Int { try other.query("select count(*) from r")[0].decode(Int.self, 0) }
            // Outside a shared transaction each call commits by itself: the action runs at once.
            try pool.query("insert into r values ($1)", [1])
            pool.afterCommit { seen.append((try? count()) ?? -1) }
            #expect(seen == [1])
            try pool.sharingTransaction {
                try pool.query("insert into r values ($1)", [2])
                pool.afterCommit { seen.append((try? count()) ?? -1) }
                // Nested: deferred to the outer transaction's COMMIT, not the savepoint's release.
                try pool.sharingTransaction {
                    try pool.query("insert into r values ($1)", [3])
                    pool.afterCommit { seen.append((try? count()) ?? -1) }
                }
                #expect(seen == [1])
            }
            #expect(seen == [1, 3, 3])
            #expect(throws: Boom.self) {
                try pool.sharingTransaction {
                    try pool.query("insert into r values ($1)", [4])
                    pool.afterCommit { seen.append(-2) }
                    throw Boom()
                }
            }
            #expect(seen == [1, 3, 3])
            // Another pool's transaction does not hold this pool's actions.
            try other.sharingTransaction { pool.afterCommit { seen.append(0) } }
            #expect(seen == [1, 3, 3, 0])
        }
    }

    @Test func transaction_RefusesToCommit_WhenBodySwallowedAnError() throws {
        try TestDatabase.withSchema { url in
            let pool = TestDatabase.pool(url)
            try pool.execute("create table r (i int primary key)")
            #expect {
                try pool.transaction { connection in
                    try connection.query("insert into r values ($1)", [1])
                    _ = try? connection.query("insert into r values ($1)", [1])
                }
            } throws: { ($0 as? PostgresError)?.sqlState == .inFailedSQLTransaction }
            #expect(try pool.query("select count(*) from r")[0].decode(Int.self, 0) == 0)
        }
    }

    @Test func nestedTransaction_RollsBackOnlyItsSavepoint() throws {
        try TestDatabase.withSchema { url in
            let pool = TestDatabase.pool(url)
            try pool.execute("create table r (i int)")
            try pool.transaction { connection in
                try connection.query("insert into r values ($1)", [1])
                _ = try? connection.transaction { inner in
                    try inner.query("insert into r values ($1)", [2])
                    throw Boom()
                }
                try connection.query("insert into r values ($1)", [3])
            }
            #expect(
                try pool.query("select array_agg(i order by i)::bigint[] as a from r")[0].decode([Int].self, "a") == [
                    1, 3,
                ])
        }
    }

    @Test func pool_Serves200ConcurrentQueries_WithFourConnections() throws {
        try TestDatabase.withSchema { url in
            let pool = TestDatabase.pool(url, size: 4)
            let results = Locked([Int?](repeating: nil, count: 200))
            let errors = Locked([String]())
            let maxInUse = Locked(0)
            let group = DispatchGroup()
            let queue = DispatchQueue(label: "pool-test", attributes: .concurrent)
            for index in 0..<200 {
                queue.async(group: group) {
                    do {
                        let row = try pool.withConnection { connection -> PostgresRow in
                            let inUse = pool.stats.inUse
                            maxInUse.withValue { $0 = max($0, inUse) }
                            return try connection.query("select $1::int * 2 as n, pg_sleep(0.002)", [index])[0]
                        }
                        let value = try row.decode(Int.self, "n")
                        results.withValue { $0[index] = value }
                    } catch {
                        errors.withValue { $0.append("\(error)") }
                    }
                }
            }
            group.wait()
            #expect(errors.current == [])
            #expect(results.current == (0..<200).map { $0 * 2 })
            #expect(maxInUse.current <= 4)
            let stats = pool.stats
            #expect(stats.open <= 4 && stats.inUse == 0 && stats.waiting == 0)
        }
    }

    @Test func pool_ThrowsBusy_WhenNoConnectionFreesInTime() throws {
        try TestDatabase.withSchema { url in
            let pool = TestDatabase.pool(url, size: 1, acquireTimeout: 0.2)
            try pool.withConnection { _ in
                #expect {
                    try pool.query("select 1")
                } throws: { error in
                    guard case PostgresError.poolTimeout = error else { return false }
                    return "\(error)".contains("database busy")
                }
            }
            // Once given back, the connection serves again.
            #expect(try pool.query("select 1 as one")[0].decode(Int.self, "one") == 1)
        }
    }

    @Test func pool_ReplacesConnection_WhenBackendIsTerminated() throws {
        try TestDatabase.withSchema { url in
            let pool = TestDatabase.pool(url, size: 1)
            let killer = try PostgresConnection(url: url)
            let first = try pool.query("select pg_backend_pid() as pid")[0].decode(Int.self, "pid")
            try TestDatabase.terminate(first, using: killer)
            // Idle in the pool when its backend died: noticed and replaced before use.
            let second = try pool.query("select pg_backend_pid() as pid", retry: .safe)[0].decode(Int.self, "pid")
            #expect(second != first)

            // Dies while checked out, outside a transaction: a safe statement is re-run on a fresh session.
            let third = try pool.withConnection { connection -> Int in
                // Gone for certain before the statement is sent.
                try TestDatabase.terminate(second, using: killer)
                return try connection.query("select pg_backend_pid() as pid", retry: .safe)[0].decode(Int.self, "pid")
            }
            #expect(third != second)
        }
    }

    @Test func transaction_Fails_WhenConnectionDiesInside_ThenPoolRecovers() throws {
        try TestDatabase.withSchema { url in
            let pool = TestDatabase.pool(url, size: 1)
            let killer = try PostgresConnection(url: url)
            try pool.execute("create table r (i int)")
            #expect {
                try pool.transaction { connection in
                    try connection.query("insert into r values ($1)", [1])
                    let pid = try connection.query("select pg_backend_pid() as pid")[0].decode(Int.self, "pid")
                    try TestDatabase.terminate(pid, using: killer)
                    try connection.query("insert into r values ($1)", [2])
                }
            } throws: { error in
                guard case PostgresError.connectionClosed = error else { return false }
                return true
            }
            #expect(try pool.query("select count(*) from r")[0].decode(Int.self, 0) == 0)
            #expect(pool.stats.inUse == 0)
        }
    }

    @Test func transaction_RetriesSerializationFailures() throws {
        try TestDatabase.withSchema { url in
            let pool = TestDatabase.pool(url, size: 2)
            try pool.execute(
                "create table counter (id int primary key, v int not null); insert into counter values (1, 1)")
            let attempts = Locked(0)
            try pool.transaction(isolation: .repeatableRead, retryingSerializationFailures: 3) { connection in
                let attempt = attempts.withValue {
                    $0 += 1
                    return $0
                }
                _ = try connection.query("select v from counter where id = $1", [1])
                if attempt == 1 {
                    // Another session changes the row after this transaction took its snapshot.
                    try pool.query("update counter set v = v + 1 where id = $1", [1])
                }
                try connection.query("update counter set v = v + 10 where id = $1", [1])
            }
            #expect(attempts.current == 2)
            #expect(try pool.query("select v from counter")[0].decode(Int.self, "v") == 12)

            #expect {
                try pool.transaction(isolation: .repeatableRead) { connection in
                    _ = try connection.query("select v from counter where id = $1", [1])
                    try pool.query("update counter set v = v + 1 where id = $1", [1])
                    try connection.query("update counter set v = v + 10 where id = $1", [1])
                }
            } throws: { ($0 as? PostgresError)?.sqlState == .serializationFailure }
        }
    }

    @Test func pool_RefusesWork_AfterShutdown() throws {
        try TestDatabase.withSchema { url in
            let pool = TestDatabase.pool(url)
            try pool.query("select 1")
            pool.shutdown()
            #expect(pool.stats.open == 0)
            #expect(throws: PostgresError.self) { try pool.query("select 1") }
        }
    }
}
