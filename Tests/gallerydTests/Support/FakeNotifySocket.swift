import Foundation

/// A fake systemd: a Unix datagram socket at a temporary path, as `NOTIFY_SOCKET` names it.
final class FakeNotifySocket {
    let path: String
    let fd: Int32

    init() throws {
        path = NSTemporaryDirectory() + "galleryd-notify-\(UInt32.random(in: 0...UInt32.max)).sock"
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard bound == 0 else { throw POSIXError(.EADDRINUSE) }
    }

    deinit {
        close(fd)
        unlink(path)
    }

    /// Every datagram that arrives within `seconds` (stopping early once `atMost` have).
    func messages(for seconds: Double, atMost limit: Int = .max) -> [String] {
        var received: [String] = []
        let end = Date().addingTimeInterval(seconds)
        var buffer = [UInt8](repeating: 0, count: 4096)
        while Date() < end && received.count < limit {
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let wait = Int32(max(1, end.timeIntervalSinceNow * 1000))
            guard poll(&descriptor, 1, wait) > 0 else { continue }
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n > 0 { received.append(String(decoding: buffer[0..<n], as: UTF8.self)) }
        }
        return received
    }

    /// The next datagram within 0.2 s, or nil.
    func receive() -> String? {
        messages(for: 0.2, atMost: 1).first
    }
}
