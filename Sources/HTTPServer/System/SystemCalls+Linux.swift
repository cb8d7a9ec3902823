#if os(Linux)
    import CLinuxShim
    import Glibc

    /// Linux: Glibc's calls, `accept4`, `MSG_NOSIGNAL`, `MSG_MORE` and Linux's `sendfile(2)`.
    extension SystemCalls {
        /// Flags for a send that must not raise SIGPIPE.
        static let noSignal = Int32(MSG_NOSIGNAL)
        /// "More data follows" for a response head written before a file (corks the segment).
        static let moreFollows = Int32(MSG_MORE)
        /// `struct tm`, for HTTP dates.
        typealias BrokenDownTime = Glibc.tm

        @inline(__always) static func closeDescriptor(_ fd: Int32) -> Int32 { Glibc.close(fd) }
        @inline(__always) static func readDescriptor(_ fd: Int32, _ b: UnsafeMutableRawPointer?, _ n: Int) -> Int {
            Glibc.read(fd, b, n)
        }
        @inline(__always) static func writeDescriptor(_ fd: Int32, _ b: UnsafeRawPointer?, _ n: Int) -> Int {
            Glibc.write(fd, b, n)
        }
        @inline(__always) static func shutdownDescriptor(_ fd: Int32, _ how: Int32) -> Int32 { Glibc.shutdown(fd, how) }
        @inline(__always) static func sendDescriptor(_ fd: Int32, _ b: UnsafeRawPointer?, _ n: Int, _ flags: Int32)
            -> Int
        {
            Glibc.send(fd, b, n, flags)
        }
        @inline(__always) static func createSocket(_ family: Int32, _ type: Int32) -> Int32 {
            Glibc.socket(family, type | Int32(SOCK_CLOEXEC.rawValue), 0)
        }
        /// Linux has MSG_NOSIGNAL on every send; nothing to set on the socket.
        @inline(__always) static func configureNoSignalPipe(_ fd: Int32) {}

        /// `sendfile(2)` from `file` at `offset` (advanced by what was sent) to `socket`: bytes sent, or -1 with errno.
        @inline(__always)
        static func sendfile(socket: Int32, file: Int32, offset: inout Int, count: Int) -> Int {
            var position = off_t(offset)
            let n = Glibc.sendfile(socket, file, &position, count)
            if n > 0 { offset = Int(position) }
            return n
        }

        /// `accept4(…, SOCK_NONBLOCK | SOCK_CLOEXEC)`: a non-blocking connection socket, or -1 with errno.
        @inline(__always)
        static func accept(
            _ fd: Int32, _ address: UnsafeMutablePointer<sockaddr>, _ length: UnsafeMutablePointer<socklen_t>
        ) -> Int32 {
            galleryd_accept4(fd, address, length)
        }

        /// `bind(2)`.
        @inline(__always)
        static func bind(_ fd: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Int32 {
            Glibc.bind(fd, address, length)
        }

        /// `gmtime_r`.
        @inline(__always)
        static func gmtime(_ time: inout time_t, _ out: inout BrokenDownTime) { _ = Glibc.gmtime_r(&time, &out) }
    }
#endif
