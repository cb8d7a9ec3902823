import Foundation
import HTTPServer
import Logging
import Synchronization
import Testing

@testable import galleryd

/// A flag the test flips while the watchdog timer reads it.
final class Switch: Sendable {
    private let on = Atomic(true)
    var isOn: Bool { on.load(ordering: .relaxed) }
    func set(_ value: Bool) { on.store(value, ordering: .relaxed) }
}

@Test func notifier_PingsWatchdog_OnlyWhileHealthy() throws {
    let systemd = try FakeNotifySocket()
    let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": systemd.path, "WATCHDOG_USEC": "100000"])
    #expect(notifier.watchdogInterval == 0.1)
    let healthy = Switch()
    notifier.startWatchdog(isHealthy: { healthy.isOn })
    defer { notifier.stopWatchdog() }
    #expect(systemd.messages(for: 0.4).filter { $0 == "WATCHDOG=1" }.count >= 2)
    healthy.set(false)
    _ = systemd.messages(for: 0.1)  // a ping already on its way
    #expect(systemd.messages(for: 0.4).isEmpty)
    healthy.set(true)
    #expect(systemd.messages(for: 0.4).contains("WATCHDOG=1"))
}

@Test func notifier_SendsToAbstractAndPathSockets_AndIgnoresOtherPIDs() throws {
    let systemd = try FakeNotifySocket()
    SystemdNotifier(environment: ["NOTIFY_SOCKET": systemd.path]).notify("READY=1")
    #expect(systemd.messages(for: 0.2) == ["READY=1"])
    let other = SystemdNotifier(environment: [
        "NOTIFY_SOCKET": systemd.path, "WATCHDOG_USEC": "100000", "WATCHDOG_PID": "1",
    ])
    #expect(other.watchdogInterval == nil)
}

@Test func health_FlagsHandlerPool_WhenQueuedWorkStopsMoving() {
    let health = ServiceHealth(loopStaleAfter: 1, progressStaleAfter: 5)
    func sample(queued: Int, started: Int, waiting: Int = 0, handedOut: Int = 0, loopAge: Double = 0.1)
        -> ServiceHealth.Sample
    {
        .init(
            oldestLoopTurnAge: loopAge, queuedHandlers: queued, startedHandlers: started,
            databaseWaiting: waiting, databaseHandedOut: handedOut)
    }
    #expect(health.problems(sample(queued: 0, started: 10), now: 0).isEmpty)
    #expect(health.problems(sample(queued: 3, started: 10), now: 1).isEmpty)
    // Busy but moving: healthy.
    #expect(health.problems(sample(queued: 3, started: 11), now: 4).isEmpty)
    #expect(health.problems(sample(queued: 3, started: 12), now: 8).isEmpty)
    // Stuck: the queue stays and nothing starts for longer than the window.
    #expect(health.problems(sample(queued: 3, started: 12), now: 14).count == 1)
    #expect(health.problems(sample(queued: 0, started: 12), now: 15).isEmpty)
    // The database pool: waiters and no hand-outs.
    #expect(health.problems(sample(queued: 0, started: 12, waiting: 2, handedOut: 50), now: 20).isEmpty)
    #expect(health.problems(sample(queued: 0, started: 12, waiting: 2, handedOut: 50), now: 26).count == 1)
    #expect(health.problems(sample(queued: 0, started: 12, waiting: 2, handedOut: 51), now: 27).isEmpty)
    // A loop that has not turned.
    #expect(health.problems(sample(queued: 0, started: 12, loopAge: 2), now: 28).count == 1)
}

/// A real server whose only handler thread is held, then a second request queued behind it: the
/// watchdog condition turns false; released, it turns true again. A loop blocked in an inline
/// handler is caught the same way.
@Test func health_FollowsARealServer_WhenHandlersAndLoopsHang() throws {
    let gate = DispatchSemaphore(value: 0)
    let router = HTTPRouter()
    router.add(.get, "/hold") { _ in
        gate.wait()
        return .text("released")
    }
    router.add(.get, "/block-loop", mayBlock: false) { _ in
        gate.wait()
        return .text("released")
    }
    var configuration = HTTPServerConfiguration(host: "127.0.0.1", port: 0)
    configuration.handlerThreads = 1
    configuration.eventLoopThreads = 1
    var logger = Logger(label: "test")
    logger.logLevel = .critical
    let server = HTTPServer(configuration: configuration, router: router, logger: logger)
    try server.start()
    defer {
        server.shutdown()
        server.wait()
    }
    let health = ServiceHealth(loopStaleAfter: 0.5, progressStaleAfter: 0.3)
    func problems() -> [String] {
        let progress = server.progress
        return health.problems(
            .init(
                oldestLoopTurnAge: progress.oldestLoopTurnAge, queuedHandlers: progress.queuedHandlers,
                startedHandlers: progress.startedHandlers, databaseWaiting: 0, databaseHandedOut: 0),
            now: ServiceHealth.monotonicSeconds())
    }
    #expect(problems().isEmpty)

    func request(_ path: String) {
        Thread.detachNewThread {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = UInt16(server.port).bigEndian
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            _ = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            let text = "GET \(path) HTTP/1.1\r\nHost: t\r\n\r\n"
            _ = text.withCString { send(fd, $0, strlen($0), 0) }
            var buffer = [UInt8](repeating: 0, count: 1024)
            _ = recv(fd, &buffer, buffer.count, 0)
            close(fd)
        }
    }
    request("/hold")
    request("/hold")
    usleep(200_000)
    #expect(server.progress.queuedHandlers == 1)
    _ = problems()
    usleep(500_000)
    #expect(problems().contains { $0.contains("handler jobs queued") })
    gate.signal()
    gate.signal()
    usleep(200_000)
    #expect(problems().isEmpty)

    request("/block-loop")
    usleep(800_000)
    #expect(problems().contains { $0.contains("event loop") })
    gate.signal()
    usleep(400_000)
    #expect(problems().isEmpty)
}
