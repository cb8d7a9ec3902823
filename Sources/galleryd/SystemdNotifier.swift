import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Speaks systemd's notify protocol without libsystemd: datagrams such as `READY=1`,
/// `STOPPING=1`, `WATCHDOG=1` and `STATUS=…` to the Unix socket named by `NOTIFY_SOCKET`
/// (a path, or an abstract name starting with `@`). Does nothing when the variable is unset.
// @unchecked: `watchdog` is set and cleared only by the serving command's own thread (start/stop).
final class SystemdNotifier: @unchecked Sendable {
    private let address: String?
    private let fd: Int32
    private var watchdog: DispatchSourceTimer?

    /// Reads `NOTIFY_SOCKET` and `WATCHDOG_USEC` from the environment.
    init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        let address = environment["NOTIFY_SOCKET"].flatMap { $0.isEmpty ? nil : $0 }
        self.address = address
        fd = address == nil ? -1 : socket(AF_UNIX, Self.datagramSocketType, 0)
        if let usec = environment["WATCHDOG_USEC"].flatMap(Int.init), usec > 0,
            environment["WATCHDOG_PID"].map({ Int32($0) == getpid() }) ?? true
        {
            watchdogInterval = Double(usec) / 1_000_000
        } else {
            watchdogInterval = nil
        }
    }

    deinit {
        watchdog?.cancel()
        if fd >= 0 { close(fd) }
    }

    /// The watchdog interval systemd asked for, in seconds, if any.
    let watchdogInterval: Double?

    /// Whether a notify socket is configured.
    var isEnabled: Bool { address != nil && fd >= 0 }

    /// Sends one notification (newline-separated assignments). Failures are ignored: systemd may be gone.
    func notify(_ state: String) {
        guard let address, fd >= 0 else { return }
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        var pathBytes = Array(address.utf8)
        if pathBytes.first == UInt8(ascii: "@") { pathBytes[0] = 0 }  // abstract namespace
        let capacity = MemoryLayout.size(ofValue: addr.sun_path)
        guard pathBytes.count < capacity else { return }
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in
            raw.copyBytes(from: pathBytes)
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + pathBytes.count + (pathBytes.first == 0 ? 0 : 1))
        let bytes = Array(state.utf8)
        _ = withUnsafePointer(to: &addr) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa in
                bytes.withUnsafeBytes { sendto(fd, $0.baseAddress, $0.count, Self.sendFlags, sa, length) }
            }
        }
    }

    /// Sends `WATCHDOG=1` at half the interval systemd asked for, until `stopWatchdog()`.
    func startWatchdog(isHealthy: @escaping @Sendable () -> Bool = { true }) {
        guard isEnabled, let interval = watchdogInterval, watchdog == nil else { return }
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue.global(qos: .utility))
        timer.schedule(deadline: .now(), repeating: interval / 2, leeway: .milliseconds(50))
        timer.setEventHandler { [weak self] in
            if isHealthy() { self?.notify("WATCHDOG=1") }
        }
        timer.resume()
        watchdog = timer
    }

    /// Stops the watchdog pings.
    func stopWatchdog() {
        watchdog?.cancel()
        watchdog = nil
    }

    /// The listening socket passed by systemd socket activation (`LISTEN_FDS`, first fd is 3), if any.
    static func activatedListenSocket(environment: [String: String] = ProcessInfo.processInfo.environment) -> Int32? {
        guard let count = environment["LISTEN_FDS"].flatMap(Int.init), count >= 1 else { return nil }
        if let pid = environment["LISTEN_PID"].flatMap(Int32.init), pid != getpid() { return nil }
        return 3
    }
}
