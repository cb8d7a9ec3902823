import Foundation
import Testing

@testable import Postgres

/// LISTEN/NOTIFY through `PostgresListener`.
@Suite struct PostgresListenerTests {
    @Test func listener_ReceivesNotify_OnItsChannelsOnly() throws {
        try TestDatabase.withSchema { url in
            let channel = "galleryd test \(UInt32.random(in: 0...UInt32.max))"
            let received = Locked([String]())
            let arrived = DispatchSemaphore(value: 0)
            let listener = PostgresListener(url: url, channels: [channel]) { name, payload in
                received.withValue { $0.append("\(name)|\(payload)") }
                arrived.signal()
            }
            defer { listener.stop() }
            try #require(listener.waitUntilListening(timeout: 10))

            let pool = TestDatabase.pool(url)
            try pool.notify(channel + " other", "ignored")
            try pool.notify(channel, "héllo 🙂 'quoted'")
            try pool.transaction { try $0.notify(channel, "after commit") }
            #expect(throws: CancellationError.self) {
                try pool.transaction { connection in
                    try connection.notify(channel, "rolled back")
                    throw CancellationError()
                }
            }
            try pool.notify(channel, "last")
            for _ in 0..<3 { #expect(arrived.wait(timeout: .now() + 10) == .success) }
            #expect(received.current == ["\(channel)|héllo 🙂 'quoted'", "\(channel)|after commit", "\(channel)|last"])
        }
    }

    @Test func listener_StopsPromptly_AndIsNotListeningAfterwards() throws {
        try TestDatabase.withSchema { url in
            let listener = PostgresListener(url: url, channels: ["galleryd_stop_test"]) { _, _ in }
            #expect(listener.waitUntilListening(timeout: 10))
            listener.stop()
            #expect(!listener.isListening)
            listener.stop()
        }
    }

    @Test func listener_CallsOnUnlisten_WhenItsSessionDies_BeforeListeningAgain() throws {
        try TestDatabase.withSchema { url in
            let channel = "galleryd_unlisten_\(UInt32.random(in: 0...UInt32.max))"
            let events = Locked([String]())
            let listener = PostgresListener(
                url: url, channels: [channel],
                settings: PostgresListenerSettings(initialBackoff: 0.01, maximumBackoff: 0.05),
                onListen: { events.withValue { $0.append("listen") } },
                onUnlisten: { events.withValue { $0.append("unlisten") } }
            ) { _, _ in }
            defer { listener.stop() }
            try #require(listener.waitUntilListening(timeout: 10))
            let admin = try PostgresConnection(url: url)
            let killed = try admin.query(
                "select pg_terminate_backend(pid) from pg_stat_activity where query = $1", ["LISTEN \"\(channel)\""])
            #expect(killed.count == 1)
            let deadline = Date().addingTimeInterval(10)
            while events.current.count < 3 && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
            #expect(events.current == ["listen", "unlisten", "listen"])
        }
    }

    @Test func listener_KeepsRetrying_WhileServerIsUnreachable() throws {
        let listener = PostgresListener(
            url: "postgresql://nobody@/nodb?host=/nonexistent-galleryd&port=1", channels: ["x"],
            settings: PostgresListenerSettings(initialBackoff: 0.01, maximumBackoff: 0.05)
        ) { _, _ in }
        #expect(!listener.waitUntilListening(timeout: 0.3))
        listener.stop()
    }
}
