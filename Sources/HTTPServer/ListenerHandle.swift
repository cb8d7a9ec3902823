import Foundation
import Synchronization

/// The listening socket, shared by every event loop; the last loop to let go closes it.
final class ListenerHandle: Sendable {
    /// The listening descriptor.
    let fd: Int32
    /// The bound port (useful when 0 was asked for).
    let port: Int
    /// Whether the socket was handed to us (systemd socket activation): then its queue belongs to
    /// whoever holds the other copy, and stopping must only let go of our descriptor.
    let inherited: Bool
    /// Event loops still using the socket.
    private let users: Mutex<Int>

    private init(fd: Int32, port: Int, users: Int, inherited: Bool) {
        self.fd = fd
        self.port = port
        self.users = Mutex(users)
        self.inherited = inherited
    }

    /// Stops the kernel from accepting on a socket we bound, at once (Linux: pending and new
    /// connection attempts are refused), before every loop has let go of it. An inherited socket
    /// is left alone: `shutdown(2)` acts on the socket, not the descriptor, so it would stop
    /// systemd's copy too and the next instance could never accept; the loops just deregister
    /// and close our descriptor, and connections keep queueing for the next instance.
    func stopAccepting() {
        guard !inherited else { return }
        SystemCalls.shutdownRead(fd)
    }

    /// One event loop no longer uses the socket; the last release closes it.
    func release() {
        let last = users.withLock { users in
            users -= 1
            return users == 0
        }
        if last { SystemCalls.close(fd) }
    }

    /// Binds and listens on `host:port`, non-blocking, with SO_REUSEADDR; `::` also takes IPv4.
    static func bind(host: String, port: Int, backlog: Int32, users: Int) throws -> ListenerHandle {
        guard port >= 0 && port <= 65535 else { throw SocketError.invalidAddress("\(host):\(port)") }
        var storage = sockaddr_storage()
        var length: socklen_t
        var family: Int32
        var v4 = in_addr()
        var v6 = in6_addr()
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        if inet_pton(AF_INET, bare, &v4) == 1 {
            family = AF_INET
            length = socklen_t(MemoryLayout<sockaddr_in>.size)
            withUnsafeMutablePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                    $0.pointee.sin_family = sa_family_t(AF_INET)
                    $0.pointee.sin_port = UInt16(port).bigEndian
                    $0.pointee.sin_addr = v4
                }
            }
        } else if inet_pton(AF_INET6, bare, &v6) == 1 {
            family = AF_INET6
            length = socklen_t(MemoryLayout<sockaddr_in6>.size)
            withUnsafeMutablePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                    $0.pointee.sin6_family = sa_family_t(AF_INET6)
                    $0.pointee.sin6_port = UInt16(port).bigEndian
                    $0.pointee.sin6_addr = v6
                }
            }
        } else {
            var hints = addrinfo()
            hints.ai_flags = AI_PASSIVE
            hints.ai_socktype = SocketType.stream
            var result: UnsafeMutablePointer<addrinfo>?
            guard getaddrinfo(bare, String(port), &hints, &result) == 0, let info = result else {
                throw SocketError.invalidAddress(host)
            }
            defer { freeaddrinfo(result) }
            family = info.pointee.ai_family
            length = info.pointee.ai_addrlen
            withUnsafeMutableBytes(of: &storage) { raw in
                raw.copyMemory(from: UnsafeRawBufferPointer(start: info.pointee.ai_addr, count: Int(length)))
            }
        }

        let fd = SystemCalls.socket(family, SocketType.stream)
        guard fd >= 0 else { throw SocketError.socketFailed(SocketError.errnoText) }
        do {
            try setOption(fd, SOL_SOCKET, SO_REUSEADDR, 1, "SO_REUSEADDR")
            if family == AF_INET6 {
                // "::" serves IPv4 too (dual stack); a specific v6 address stays v6.
                try setOption(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, 0, "IPV6_V6ONLY")
            }
            let bound = withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { SystemCalls.bind(fd, $0, length) }
            }
            guard bound == 0 else {
                throw SocketError.bindFailed(address: "\(host):\(port)", message: SocketError.errnoText)
            }
            guard listen(fd, backlog) == 0 else { throw SocketError.listenFailed(SocketError.errnoText) }
            return try adopt(fd: fd, users: users, inherited: false)
        } catch {
            SystemCalls.close(fd)
            throw error
        }
    }

    /// Uses an already-listening socket (systemd socket activation): makes it non-blocking and reads its port.
    static func adopt(fd: Int32, users: Int, inherited: Bool = true) throws -> ListenerHandle {
        var type: Int32 = 0
        var typeLength = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &typeLength) == 0 else {
            throw SocketError.invalidDescriptor(fd, SocketError.errnoText)
        }
        guard type == SocketType.stream else { throw SocketError.invalidDescriptor(fd, "not a stream socket") }
        guard SystemCalls.makeNonBlocking(fd) else { throw SocketError.invalidDescriptor(fd, SocketError.errnoText) }
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let named = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard named == 0 else { throw SocketError.invalidDescriptor(fd, SocketError.errnoText) }
        let port: Int
        switch Int32(storage.ss_family) {
        case AF_INET:
            port = withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin_port)) }
            }
        case AF_INET6:
            port = withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                    Int(UInt16(bigEndian: $0.pointee.sin6_port))
                }
            }
        default:
            port = 0
        }
        return ListenerHandle(fd: fd, port: port, users: users, inherited: inherited)
    }

    private static func setOption(_ fd: Int32, _ level: Int32, _ name: Int32, _ value: Int32, _ label: String) throws {
        var v = value
        guard setsockopt(fd, level, name, &v, socklen_t(MemoryLayout<Int32>.size)) == 0 else {
            throw SocketError.optionFailed(option: label, message: SocketError.errnoText)
        }
    }
}
