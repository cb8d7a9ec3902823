import Foundation
import Testing

@testable import Postgres

/// Restarts the test cluster (`$GALLERYD_TEST_PGCTL restart`) while a pool and a listener are in
/// use. Holds the cluster lock exclusively, so no other database test runs meanwhile.
@Suite(.serialized) struct PostgresRestartTests {
    @Test func pool_AndListener_Recover_AfterServerRestart() throws {
        let base = try TestDatabase.url()
        _ = try TestDatabase.controlCommand()
        try ClusterLock.exclusive {
            defer {
                // Whatever happened, leave the cluster running for the other tests.
                if (try? TestDatabase.control("status")) != 0 { _ = try? TestDatabase.control("start") }
            }
            let channel = "galleryd_restart_\(UInt32.random(in: 0...UInt32.max))"
            let received = Locked([String]())
            let listens = Locked(0)
            let listener = PostgresListener(
                url: base, channels: [channel], onListen: { listens.withValue { $0 += 1 } }
            ) { _, payload in received.withValue { $0.append(payload) } }
            defer { listener.stop() }
            try #require(listener.waitUntilListening(timeout: 10))

            let pool = TestDatabase.pool(base, size: 2)
            // Open both connections so both are stale after the restart.
            try pool.withConnection { a in
                try pool.withConnection { b in
                    _ = try a.query("select 1")
                    _ = try b.query("select 1")
                }
            }
            try pool.notify(channel, "before")

            try #require(try TestDatabase.control("restart") == 0, "the test cluster did not restart")

            #expect(try pool.query("select 41 + $1 as n", [1], retry: .safe)[0].decode(Int.self, "n") == 42)
            #expect(try pool.transaction { try $0.query("select 1 as one")[0].decode(Int.self, "one") } == 1)
            #expect(try pool.query("select 2 as two", retry: .safe)[0].decode(Int.self, "two") == 2)

            // The listener reconnects by itself; notify until it hears one again.
            let deadline = Date().addingTimeInterval(30)
            while !received.current.contains("after"), Date() < deadline {
                try pool.notify(channel, "after")
                usleep(100_000)
            }
            #expect(received.current.first == "before")
            #expect(received.current.contains("after"))
            #expect(listens.current >= 2)
        }
    }
}
