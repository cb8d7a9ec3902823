import Foundation
import GalleryTestSupport
import Testing

@Suite(.serialized) struct SystemdNotifyTests {
    @Test func serve_SendsReadyWatchdogAndStopping_InOrder() throws {
        let lock = try ClusterLock.acquireFileDescriptor()
        defer { close(lock) }
        let database = try ScratchDatabase(prefix: "galleryd_notify")
        defer { database.drop() }
        let notify = try FakeNotifySocket()
        let storage = NSTemporaryDirectory() + "notify-blobs-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: storage) }

        let process = Process()
        process.executableURL = URL(fileURLWithPath: try galleryBinary())
        process.arguments = ["serve", "--host", "127.0.0.1", "--port", "0", "--workers", "0"]
        process.environment = [
            "DATABASE_URL": database.url, "GALLERYD_STORAGE_DIR": storage, "GALLERYD_MASTER_KEY": TestKeys.masterKey,
            "GALLERYD_URL_SIGNING_KEY": TestKeys.urlSigningKey,
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
