import Foundation
import Synchronization

/// A TCP relay in front of a real server (moto) that can cut every connection once the server has
/// sent `cutAfter` bytes on it: the object store dying in the middle of a body, for real, without
/// stopping the server other tests share. Threads and blocking sockets; `stop()` ends it.
final class CuttingTCPProxy: Sendable {
    /// The port to point clients at (127.0.0.1).
    let port: Int
    private let listener: Int32
    private let upstreamHost: String
    private let upstreamPort: Int
    private struct State {
        var limit: Int?
        var stopped = false
        var cutCount = 0
    }
    private let state = Mutex(State())

    /// A relay to `upstreamHost:upstreamPort` that passes everything until `cut(after:)`.
    init(upstreamHost: String, upstreamPort: Int) throws {
        self.upstreamHost = upstreamHost
        self.upstreamPort = upstreamPort
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var one: Int32 = 1
        setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(listener, 64) == 0 else {
            close(listener)
            throw TestSetupError(description: "relay: bind/listen: \(String(cString: strerror(errno)))")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        self.listener = listener
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    /// From now on, a connection is cut (both ways) once the server has sent `bytes` bytes on it;
    /// nil passes everything again.
    func cut(after bytes: Int?) {
        state.withLock { $0.limit = bytes }
    }

    /// Connections cut so far.
    var cuts: Int {
        state.withLock { $0.cutCount }
    }

    /// Stops accepting; relays in progress end when either side closes.
    func stop() {
        state.withLock { $0.stopped = true }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            if client < 0 {
                let done = state.withLock { $0.stopped }
                if done || errno == EBADF || errno == EINVAL { return }
                continue
            }
            guard let upstream = connectUpstream() else {
                close(client)
                continue
            }
            let pair = Pair(client: client, upstream: upstream)
            Thread.detachNewThread { [self] in
                relay(from: client, to: upstream, counted: false)
                shutdown(upstream, Int32(SHUT_WR))
                pair.done()
            }
            Thread.detachNewThread { [self] in
                relay(from: upstream, to: client, counted: true)
                shutdown(client, Int32(SHUT_RDWR))
                shutdown(upstream, Int32(SHUT_RDWR))
                pair.done()
            }
        }
    }

    /// Copies until EOF or an error; `counted` (the server's direction) stops at the limit.
    private func relay(from source: Int32, to destination: Int32, counted: Bool) {
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        var sent = 0
        while true {
            var want = buffer.count
            if counted {
                let limit = state.withLock { $0.limit }
                if let limit {
                    if sent >= limit {
                        state.withLock { $0.cutCount += 1 }
                        return
                    }
                    want = min(want, limit - sent)
                }
            }
            let n = buffer.withUnsafeMutableBytes { recv(source, $0.baseAddress, want, 0) }
            if n <= 0 { return }
            var offset = 0
            while offset < n {
                let w = buffer.withUnsafeBytes {
                    send(destination, $0.baseAddress! + offset, n - offset, Int32(MSG_NOSIGNAL))
                }
                if w <= 0 { return }
                offset += w
            }
            sent += n
        }
    }

    private func connectUpstream() -> Int32? {
        let s = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr(upstreamHost)
        address.sin_port = UInt16(upstreamPort).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(s, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        if connected != 0 {
            close(s)
            return nil
        }
        return s
    }

    /// Closes both descriptors once both directions are done.
    private final class Pair: Sendable {
        let client: Int32
        let upstream: Int32
        private let finished = Atomic(0)

        init(client: Int32, upstream: Int32) {
            self.client = client
            self.upstream = upstream
        }

        func done() {
            let last = finished.add(1, ordering: .acquiringAndReleasing).newValue == 2
            if last {
                close(client)
                close(upstream)
            }
        }
    }
}
