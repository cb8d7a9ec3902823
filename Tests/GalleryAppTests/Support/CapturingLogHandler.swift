import Logging
import Synchronization

/// Keeps what it is asked to log, as a line `message key=value…` per event (metadata sorted by
/// key), with its level: for tests that check what the app logs.
// @unchecked: `events` is behind its Mutex; the rest is set before the handler is shared.
final class CapturingLogHandler: LogHandler, @unchecked Sendable {
    let events = Mutex<[(level: Logger.Level, line: String)]>([])
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    /// The lines logged so far.
    var lines: [String] { events.withLock { $0.map(\.line) } }

    /// A logger that logs here at `level` and above.
    func logger(_ label: String = "test", level: Logger.Level = .trace) -> Logger {
        var logger = Logger(label: label) { _ in self }
        logger.logLevel = level
        return logger
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let fields = metadata.merging(event.metadata ?? [:]) { $1 }.sorted { $0.key < $1.key }.map {
            "\($0.key)=\($0.value)"
        }
        let line = ([event.message.description] + fields).joined(separator: " ")
        events.withLock { $0.append((event.level, line)) }
    }
}
