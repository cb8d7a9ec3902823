import ArgumentParser
import Foundation
import GalleryApp
import Logging
import Metrics
import Synchronization

/// `galleryd serve`: runs the HTTP server and the in-process workers until SIGTERM or SIGINT,
/// then drains and exits 0. Speaks the systemd notify protocol when `NOTIFY_SOCKET` is set.
struct ServeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve", abstract: "Serve the API, the bucket and the workers.")

    @OptionGroup var options: ConfigOptions
    @Option(help: "Address to listen on (GALLERYD_HOST).") var host: String?
    @Option(help: "Port to listen on (GALLERYD_PORT).") var port: Int?
    @Option(name: .customLong("public-url"), help: "Base URL for absolute file URLs (GALLERYD_PUBLIC_URL).")
    var publicURL: String?
    @Option(help: "In-process worker threads, 0 for none (GALLERYD_WORKERS).") var workers: Int?
    @Option(
        name: .customLong("io-backend"),
        help: "How event loops wait for sockets: dispatch or epoll (GALLERYD_IO_BACKEND).")
    var ioBackend: String?
    @Flag(name: .customLong("no-migrate"), help: "Do not apply pending migrations at start.") var noMigrate = false

    func run() throws {
        TerminationSignals.block()
        var extra: [(key: String, value: String)] = []
        if let host { extra.append((key: "host", value: host)) }
        if let port { extra.append((key: "port", value: String(port))) }
        if let publicURL { extra.append((key: "public_url", value: publicURL)) }
        if let workers { extra.append((key: "workers", value: String(workers))) }
        if let ioBackend { extra.append((key: "io_backend", value: ioBackend)) }
        if noMigrate { extra.append((key: "migrate_on_start", value: "false")) }
        let configuration = options.load(extra: extra)
        do { try configuration.validateForServing() } catch { fail("config: \(error)") }
        let logger = bootstrapLogging(level: configuration.logLevel)
        let notifier = SystemdNotifier()

        let application: GalleryApplication
        do {
            application = try GalleryApplication(configuration: configuration, logger: logger)
            // Anything that reports through swift-metrics lands in the same /metrics registry.
            MetricsSystem.bootstrap(application.metrics.registry.metricsFactory)
            notifier.notify("STATUS=Migrating and binding")
            try application.start(listenFileDescriptor: SystemdNotifier.activatedListenSocket())
        } catch {
            logger.critical("cannot start: \(error)")
            fail("cannot start: \(error)", code: 1)
        }
        let stopping = StopFlag()
        TerminationSignals.handle { number in
            guard stopping.set() else { return }
            logger.notice("shutting down", metadata: ["signal": "\(number == SIGTERM ? "SIGTERM" : "SIGINT")"])
            notifier.stopWatchdog()
            notifier.notify("STOPPING=1\nSTATUS=Draining connections")
            application.shutdown()
        }
        notifier.notify("READY=1\nSTATUS=Serving on port \(application.port)\nMAINPID=\(getpid())")
        notifier.startWatchdog(isHealthy: Self.watchdogCheck(application, notifier: notifier, logger: logger))
        application.wait()
        logger.notice("stopped")
    }
}

extension ServeCommand {
    /// The watchdog's condition: every event loop turned within half the watchdog interval (at
    /// least 1 s), and neither the handler pool nor the database pool sits on queued work without
    /// progress for longer than a statement may take. Unhealthy turns are logged once each.
    static func watchdogCheck(
        _ application: GalleryApplication, notifier: SystemdNotifier, logger: Logger
    ) -> @Sendable () -> Bool {
        let interval = notifier.watchdogInterval ?? 30
        let configuration = application.configuration
        let statement = Double(configuration.statementTimeoutMs + configuration.poolTimeoutMs) / 1000
        let health = ServiceHealth(
            loopStaleAfter: max(1, interval / 2), progressStaleAfter: max(interval / 2, statement))
        let reported = StopFlag()
        return {
            guard let progress = application.serverProgress else { return true }
            let stats = application.pool.stats
            let problems = health.problems(
                ServiceHealth.Sample(
                    oldestLoopTurnAge: progress.oldestLoopTurnAge, queuedHandlers: progress.queuedHandlers,
                    startedHandlers: progress.startedHandlers, databaseWaiting: stats.waiting,
                    databaseHandedOut: stats.handedOut),
                now: ServiceHealth.monotonicSeconds())
            if problems.isEmpty {
                reported.clear()
                return true
            }
            if reported.set() {
                logger.critical(
                    "watchdog: not pinging systemd", metadata: ["problems": "\(problems.joined(separator: "; "))"])
            }
            return false
        }
    }
}

/// A flag set once, from any thread.
final class StopFlag: Sendable {
    private let isSet = Atomic(false)

    /// Sets the flag; returns false if it was already set.
    func set() -> Bool {
        isSet.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged
    }

    /// Clears the flag so the next `set()` succeeds again.
    func clear() {
        isSet.store(false, ordering: .relaxed)
    }
}

/// Logs to stderr at the configured level, once per process.
func bootstrapLogging(level: String) -> Logger {
    let parsed = Logger.Level(rawValue: level) ?? .info
    LoggingBootstrap.once(level: parsed)
    var logger = Logger(label: "galleryd")
    logger.logLevel = parsed
    return logger
}

/// Runs `LoggingSystem.bootstrap` only once (it traps when called twice).
enum LoggingBootstrap {
    /// Whether the bootstrap ran; held while it runs, so a second caller waits for it.
    private static let done = Mutex(false)

    static func once(level: Logger.Level) {
        done.withLock { done in
            guard !done else { return }
            done = true
            bootstrap(level: level)
        }
    }

    private static func bootstrap(level: Logger.Level) {
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            // Request paths and other client text reach the log: one line stays one line.
            return ControlEscapingLogHandler(wrapping: handler)
        }
    }
}
