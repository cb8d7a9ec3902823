import Foundation
import Testing

/// The `galleryd` executable built next to this test bundle.
func galleryBinary() throws -> String {
    let bundle = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
    var directory = bundle.deletingLastPathComponent()
    for _ in 0..<4 {
        let candidate = directory.appendingPathComponent("galleryd").path
        if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        directory = directory.deletingLastPathComponent()
    }
    throw TestSetupError(description: "galleryd binary not found near \(bundle.path); build it with swift build")
}

/// A Unix datagram socket bound to a temporary path, standing in for systemd's notify socket.
final class FakeNotifySocket {
    let path: String
    let fd: Int32

    init() throws {
        path = NSTemporaryDirectory() + "notify-\(UUID().uuidString.prefix(8)).sock"
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8) + [0]) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0 else { throw TestSetupError(description: "bind \(path): \(errno)") }
        var timeout = timeval(tv_sec: 0, tv_usec: 200_000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit {
        close(fd)
        unlink(path)
    }

    /// The next datagram, or nil after the receive timeout.
    func receive() -> String? {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = recv(fd, &buffer, buffer.count, 0)
        return n > 0 ? String(decoding: buffer[0..<n], as: UTF8.self) : nil
    }
}

@Suite(.serialized) struct SystemdNotifyTests {
    @Test func serve_SendsReadyWatchdogAndStopping_InOrder() throws {
        let lock = try TestServer.lockClusterShared()
        defer { close(lock) }
        let database = try TestServer.makeDatabase(prefix: "galleryd_notify")
        defer { TestServer.dropDatabase(database.name, admin: database.admin) }
        let notify = try FakeNotifySocket()
        let storage = NSTemporaryDirectory() + "notify-blobs-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: storage) }

        let process = Process()
        process.executableURL = URL(fileURLWithPath: try galleryBinary())
        process.arguments = ["serve", "--host", "127.0.0.1", "--port", "0", "--workers", "0"]
        process.environment = [
            "DATABASE_URL": database.url, "GALLERYD_STORAGE_DIR": storage, "GALLERYD_MASTER_KEY": TestServer.masterKey,
            "GALLERYD_URL_SIGNING_KEY": TestServer.urlSigningKey,
            "NOTIFY_SOCKET": notify.path, "WATCHDOG_USEC": "200000", "GALLERYD_LOG_LEVEL": "warning",
        ]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer { if process.isRunning { process.terminate() } }

        var messages: [String] = []
        let deadline = Date().addingTimeInterval(30)
        var sentTerm = false
        while Date() < deadline {
            if let message = notify.receive() { messages.append(message) }
            let watchdogs = messages.filter { $0.contains("WATCHDOG=1") }.count
            if !sentTerm && watchdogs >= 2 {
                kill(process.processIdentifier, SIGTERM)
                sentTerm = true
            }
            if messages.contains(where: { $0.contains("STOPPING=1") }) { break }
        }
        process.waitUntilExit()
        let ready = messages.firstIndex { $0.contains("READY=1") }
        let watchdog = messages.firstIndex { $0.contains("WATCHDOG=1") }
        let stopping = messages.firstIndex { $0.contains("STOPPING=1") }
        #expect(ready != nil && watchdog != nil && stopping != nil, "got \(messages)")
        if let ready, let watchdog, let stopping {
            #expect(ready < watchdog && watchdog < stopping, "out of order: \(messages)")
        }
        #expect(messages.contains { $0.contains("STATUS=") })
        #expect(process.terminationStatus == 0, "serve must exit 0 after SIGTERM")
    }
}
