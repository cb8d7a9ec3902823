import Foundation

/// The listening socket, shared by every event loop; the last loop to let go closes it.
final class ListenerHandle: @unchecked Sendable {
    /// The listening descriptor.
    let fd: Int32
    /// The bound port (useful when 0 was asked for).
    let port: Int
    private let lock = Lock()
    private var users: Int

    private init(fd: Int32, port: Int, users: Int) {
        self.fd = fd
        self.port = port
        self.users = users
    }

    /// Stops the kernel from accepting on the socket at once (Linux: pending and new connection attempts
    /// are refused), before every loop has let go of it.
    func stopAccepting() {
        _ = Glibc.shutdown(fd, Int32(SHUT_RD))
    }

    /// One event loop no longer uses the socket; the last release closes it.
    func release() {
        let last: Bool = lock.withLock {
            users -= 1
            return users == 0
        }
        if last { Glibc.close(fd) }
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
            hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
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

        let fd = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SocketError.socketFailed(SocketError.errnoText) }
        do {
            try setOption(fd, SOL_SOCKET, SO_REUSEADDR, 1, "SO_REUSEADDR")
            if family == AF_INET6 {
                // "::" serves IPv4 too (dual stack); a specific v6 address stays v6.
                try setOption(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, 0, "IPV6_V6ONLY")
            }
            let bound = withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(fd, $0, length) }
            }
            guard bound == 0 else {
                throw SocketError.bindFailed(address: "\(host):\(port)", message: SocketError.errnoText)
            }
            guard listen(fd, backlog) == 0 else { throw SocketError.listenFailed(SocketError.errnoText) }
            return try adopt(fd: fd, users: users)
        } catch {
            Glibc.close(fd)
            throw error
        }
    }

    /// Uses an already-listening socket (systemd socket activation): makes it non-blocking and reads its port.
    static func adopt(fd: Int32, users: Int) throws -> ListenerHandle {
        var type: Int32 = 0
        var typeLength = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &typeLength) == 0 else {
            throw SocketError.invalidDescriptor(fd, SocketError.errnoText)
        }
        guard type == Int32(SOCK_STREAM.rawValue) else { throw SocketError.invalidDescriptor(fd, "not a stream socket") }
        let flags = fcntl(fd, F_GETFL)
        guard flags >= 0, fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0 else {
            throw SocketError.invalidDescriptor(fd, SocketError.errnoText)
        }
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
                $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin6_port)) }
            }
        default:
            port = 0
        }
        return ListenerHandle(fd: fd, port: port, users: users)
    }

    private static func setOption(_ fd: Int32, _ level: Int32, _ name: Int32, _ value: Int32, _ label: String) throws {
        var v = value
        guard setsockopt(fd, level, name, &v, socklen_t(MemoryLayout<Int32>.size)) == 0 else {
            throw SocketError.optionFailed(option: label, message: SocketError.errnoText)
        }
    }
}
