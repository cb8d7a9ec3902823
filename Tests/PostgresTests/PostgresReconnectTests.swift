import Foundation
import Testing

@testable import Postgres

/// What the connection does when its session dies around a statement: one its caller marked
/// `retry: .safe` is re-run on a fresh session, any other that was sent is not (it may have
/// committed), whatever its text, and a session the server ended while idle is replaced before a
/// statement that cannot be re-run is sent.
@Suite struct PostgresReconnectTests {
    /// Terminates `pid`'s backend from another session as soon as it is running a `pg_sleep`. The
    /// sleeps are long (the terminate ends them), so a busy machine cannot make the killer miss one.
    private static func terminateWhenSleeping(_ pid: Int, url: String) -> Thread {
        let thread = Thread {
            guard let killer = try? PostgresConnection(url: url) else { return }
            let deadline = Date().addingTimeInterval(60)
            while Date() < deadline {
                let active =
                    (try? killer.query(
                        "select 1 from pg_stat_activity where pid = $1::int and state = 'active' and query like '%pg_sleep%'",
                        [pid]
                    ).count) ?? 0
                if active == 1 {
                    _ = try? killer.query("select pg_terminate_backend($1::int)", [pid])
                    return
                }
                usleep(5_000)
            }
        }
        thread.start()
        return thread
    }

    @Test func write_IsNotReRun_WhenTheSessionDiesAfterItWasSent() throws {
        try TestDatabase.withSchema { url in
            let connection = try PostgresConnection(url: url)
            try connection.execute("create table r (i int)")
            let pid = try connection.query("select pg_backend_pid() as pid")[0].decode(Int.self, "pid")
            _ = Self.terminateWhenSleeping(pid, url: url)
            #expect {
                try connection.query("insert into r select $1::int from pg_sleep(60)", [1])
            } throws: { error in
                guard case PostgresError.connectionClosed(let message) = error else { return false }
                return message.contains("may or may not have run")
            }
            // Run once and aborted by the termination; a blind re-run would have inserted a row.
            let fresh = try PostgresConnection(url: url)
            #expect(try fresh.query("select count(*) from r")[0].decode(Int.self, 0) == 0)
            // The connection itself is usable again, on a new session.
            #expect(try connection.query("select pg_backend_pid() as pid")[0].decode(Int.self, "pid") != pid)
            try connection.query("insert into r values ($1)", [2])
            #expect(try fresh.query("select count(*) from r")[0].decode(Int.self, 0) == 1)
        }
    }

    @Test func safeRead_IsReRun_WhenTheSessionDiesDuringIt() throws {
        try TestDatabase.withSchema { url in
            let connection = try PostgresConnection(url: url)
            let pid = try connection.query("select pg_backend_pid() as pid")[0].decode(Int.self, "pid")
            _ = Self.terminateWhenSleeping(pid, url: url)
            // The first run is terminated mid-sleep; the re-run, on a fresh session, does not sleep.
            #expect(
                try connection.query(
                    "select 7 as n from pg_sleep(case when pg_backend_pid() = $1::int then 60 else 0 end)", [pid],
                    retry: .safe
                )[0].decode(Int.self, "n") == 7)
            #expect(try connection.query("select pg_backend_pid() as pid")[0].decode(Int.self, "pid") != pid)
        }
    }

    @Test func read_IsNotReRun_WhenTheCallerDidNotSaySafe() throws {
        try TestDatabase.withSchema { url in
            let connection = try PostgresConnection(url: url)
            let pid = try connection.query("select pg_backend_pid() as pid")[0].decode(Int.self, "pid")
            _ = Self.terminateWhenSleeping(pid, url: url)
            // The same read as above, without `retry: .safe`: the default is never to re-send it.
            #expect {
                try connection.query(
                    "select 7 as n from pg_sleep(case when pg_backend_pid() = $1::int then 60 else 0 end)", [pid])
            } throws: { error in
                guard case PostgresError.connectionClosed(let message) = error else { return false }
                return message.contains("may or may not have run")
            }
            #expect(try connection.query("select pg_backend_pid() as pid")[0].decode(Int.self, "pid") != pid)
        }
    }

    @Test func write_IsReRun_WhenTheCallerSaysItIsSafe() throws {
        try TestDatabase.withSchema { url in
            let connection = try PostgresConnection(url: url)
            try connection.execute("create table r (i int)")
            let pid = try connection.query("select pg_backend_pid() as pid")[0].decode(Int.self, "pid")
            _ = Self.terminateWhenSleeping(pid, url: url)
            // The caller's word, not the SQL text, decides: the aborted first run inserted nothing,
            // the re-run on a fresh session (no sleep there) inserts the row.
            try connection.query(
                "insert into r select $1::int from pg_sleep(case when pg_backend_pid() = $2::int then 60 else 0 end)",
                [1, pid], retry: .safe)
            #expect(try connection.query("select count(*) from r")[0].decode(Int.self, 0) == 1)
        }
    }

    @Test func write_RunsOnce_WhenTheSessionEndedWhileIdle() throws {
        try TestDatabase.withSchema { url in
            let connection = try PostgresConnection(url: url)
            try connection.execute("create table r (i int)")
            let pid = try connection.query("select pg_backend_pid() as pid")[0].decode(Int.self, "pid")
            let killer = try PostgresConnection(url: url)
            try TestDatabase.terminate(pid, using: killer)
            // The goodbye the server sent is read before the write goes out: reconnect, then write once.
            try connection.query("insert into r values ($1)", [1])
            #expect(try killer.query("select count(*) from r")[0].decode(Int.self, 0) == 1)
        }
    }
}
