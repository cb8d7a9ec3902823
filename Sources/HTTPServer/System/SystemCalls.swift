import Foundation

#if os(Linux)
    import CLinuxShim
    import Glibc
#endif

/// The few system calls whose name or shape differs between Linux and Darwin, behind one name, so
/// the rest of the server reads the same on both. The bodies live in `SystemCalls+Linux.swift` and
/// `SystemCalls+Darwin.swift`; what is common is here.
enum SystemCalls {
    /// `close(2)`; named here because the socket types have `close()` methods of their own.
    @inline(__always)
    static func close(_ fd: Int32) {
        _ = closeDescriptor(fd)
    }

    /// `read(2)`.
    @inline(__always)
    static func read(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
        readDescriptor(fd, buffer, count)
    }

    /// `write(2)`.
    @inline(__always)
    static func write(_ fd: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int {
        writeDescriptor(fd, buffer, count)
    }

    /// `shutdown(fd, SHUT_WR)`: sends our FIN, keeps reading. False when the socket is gone.
    static func shutdownWrite(_ fd: Int32) -> Bool {
        shutdownDescriptor(fd, Int32(SHUT_WR)) == 0
    }

    /// `shutdown(fd, SHUT_RD)`.
    static func shutdownRead(_ fd: Int32) {
        _ = shutdownDescriptor(fd, Int32(SHUT_RD))
    }

    /// `send(2)` that never raises SIGPIPE; `dontWait` for a best-effort write on a blocking path.
    static func send(_ fd: Int32, _ buffer: UnsafeRawPointer?, _ count: Int, dontWait: Bool = false) -> Int {
        sendDescriptor(fd, buffer, count, noSignal | (dontWait ? Int32(MSG_DONTWAIT) : 0))
    }

    /// Makes a new connection's socket ready for the loops: no Nagle delay (responses are written
    /// whole), and on Darwin no SIGPIPE (which has no MSG_NOSIGNAL for sendfile either).
    static func configureConnection(_ fd: Int32) {
        var one: Int32 = 1
        _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        configureNoSignalPipe(fd)
    }

    /// A socket of `type` with close-on-exec set.
    static func socket(_ family: Int32, _ type: Int32) -> Int32 {
        let fd = createSocket(family, type)
        if fd >= 0 { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        return fd
    }

    /// `fd`'s O_NONBLOCK and FD_CLOEXEC set; false on failure.
    static func makeNonBlocking(_ fd: Int32) -> Bool {
        let flags = fcntl(fd, F_GETFL)
        guard flags >= 0, fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0 else { return false }
        return fcntl(fd, F_SETFD, FD_CLOEXEC) == 0
    }
}

/// Socket type constants as `Int32` (Glibc imports `SOCK_STREAM` as an enum, Darwin as an integer).
enum SocketType {
    #if os(Linux)
        /// `SOCK_STREAM`.
        static let stream = Int32(SOCK_STREAM.rawValue)
    #else
        /// `SOCK_STREAM`.
        static let stream = SOCK_STREAM
    #endif
}
