import Foundation
import GalleryTestSupport
import Testing

/// `systemd-socket-activate` (Debian's systemd package, installed by scripts/deps.sh) holds the
/// listening socket, as systemd does for `galleryd.socket`, and a shell under it runs galleryd
/// twice on it: a connection made after the first instance stopped must be answered by the
/// second. (Before the fix, graceful stop shut the shared socket down and the connection was refused.)
@Suite(.serialized) struct SocketActivationRestartTests {
    @Test func serve_LeavesActivatedSocketForTheNextInstance() throws {
        let lock = try ClusterLock.acquireFileDescriptor()
        defer { close(lock) }
        let database = try ScratchDatabase(prefix: "galleryd_activate")
        defer { database.drop() }
        let directory = NSTemporaryDirectory() + "activate-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let port = try Self.freePort()

        // LISTEN_PID names the shell, not its children: unset it so galleryd takes fd 3 as its own.
        let galleryd = "env -u LISTEN_PID \(try galleryBinary()) serve --workers 0"
        let script = """
            \(galleryd) 2>>\(directory)/1.log & echo $! >\(directory)/1.pid; wait $!
            \(galleryd) 2>>\(directory)/2.log & echo $! >\(directory)/2.pid; wait $!
            """
        let activator = Process()
        activator.executableURL = URL(fileURLWithPath: "/usr/bin/systemd-socket-activate")
        activator.arguments = [
            "-l", "127.0.0.1:\(port)",
            "-E", "DATABASE_URL=\(database.url)", "-E", "GALLERYD_STORAGE_DIR=\(directory)/blobs",
            "-E", "GALLERYD_MASTER_KEY=\(TestKeys.masterKey)",
            "-E", "GALLERYD_URL_SIGNING_KEY=\(TestKeys.urlSigningKey)", "-E", "GALLERYD_LOG_LEVEL=warning",
            "-E", "PATH=/usr/bin:/bin", "/bin/sh", "-c", script,
        ]
        activator.standardOutput = FileHandle.nullDevice
        activator.standardError = FileHandle.nullDevice
        // Test threads (Dispatch workers) block most signals, and a spawned child inherits the
        // mask: the shell would never see SIGCHLD (its `wait` hangs) nor the activator SIGTERM.
        var empty = sigset_t()
        var saved = sigset_t()
        sigemptyset(&empty)
        pthread_sigmask(SIG_SETMASK, &empty, &saved)
        defer { pthread_sigmask(SIG_SETMASK, &saved, nil) }
        try activator.run()
        defer {
            for name in ["1.pid", "2.pid"] {
                if let text = try? String(contentsOfFile: "\(directory)/\(name)", encoding: .utf8),
                    let pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines))
                {
                    kill(pid, SIGKILL)
                }
            }
            if activator.isRunning { kill(activator.processIdentifier, SIGKILL) }
            activator.waitUntilExit()
        }

        // The first connection starts the shell and the first instance.
        #expect(
            Self.eventually { (try? Self.connects(port: port)) == true }, "systemd-socket-activate is not listening")
        #expect(try Self.health(port: port) == 200)
        let first = try #require(Self.pid(in: "\(directory)/1.pid"))
        kill(first, SIGTERM)
        #expect(Self.eventually { kill(first, 0) != 0 }, "the first instance did not stop")

        // Between instances: systemd's socket still listens, so this connection waits for the next one.
        #expect(try Self.health(port: port) == 200)
        #expect(Self.pid(in: "\(directory)/2.pid") != nil)
    }

    /// The status of `GET /health` on a new connection (30 s receive timeout).
    static func health(port: Int) throws -> Int {
        try RawHTTPClient.exchange(port: port, head: "GET /health HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
            .status
    }

    /// Whether something listens on `port` (the activator binds shortly after it starts).
    static func connects(port: Int) throws -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }

    static func pid(in path: String) -> Int32? {
        var text: String?
        _ = eventually {
            text = try? String(contentsOfFile: path, encoding: .utf8)
            return text?.isEmpty == false
        }
        return text.flatMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
    }

    static func eventually(_ seconds: Double = 20, _ condition: () -> Bool) -> Bool {
        let end = Date().addingTimeInterval(seconds)
        while Date() < end {
            if condition() { return true }
            usleep(20_000)
        }
        return condition()
    }

    /// A port nobody listens on right now.
    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard ok else { throw TestSetupError(description: "no free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
