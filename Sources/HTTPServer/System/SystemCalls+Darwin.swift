#if canImport(Darwin)
    import Darwin

    /// macOS 13+: Darwin's calls, `SO_NOSIGPIPE` instead of `MSG_NOSIGNAL`, `accept` + `fcntl`
    /// instead of `accept4`, and BSD `sendfile(2)`. Written from the manual pages; not built here
    /// (there is no Mac on the build machine), see the README.
    extension SystemCalls {
        /// Darwin has no MSG_NOSIGNAL: sockets get SO_NOSIGPIPE in `configureConnection`.
        static let noSignal: Int32 = 0
        /// No MSG_MORE on Darwin; the head is simply sent before the file.
        static let moreFollows: Int32 = 0
        /// `struct tm`, for HTTP dates.
        typealias BrokenDownTime = Darwin.tm

        @inline(__always) static func closeDescriptor(_ fd: Int32) -> Int32 { Darwin.close(fd) }
        @inline(__always) static func readDescriptor(_ fd: Int32, _ b: UnsafeMutableRawPointer?, _ n: Int) -> Int {
            Darwin.read(fd, b, n)
        }
        @inline(__always) static func writeDescriptor(_ fd: Int32, _ b: UnsafeRawPointer?, _ n: Int) -> Int {
            Darwin.write(fd, b, n)
        }
        @inline(__always) static func shutdownDescriptor(_ fd: Int32, _ how: Int32) -> Int32 {
            Darwin.shutdown(fd, how)
        }
        @inline(__always) static func sendDescriptor(_ fd: Int32, _ b: UnsafeRawPointer?, _ n: Int, _ flags: Int32)
            -> Int
        {
            Darwin.send(fd, b, n, flags)
        }
        @inline(__always) static func createSocket(_ family: Int32, _ type: Int32) -> Int32 {
            Darwin.socket(family, type, 0)
        }
        @inline(__always) static func configureNoSignalPipe(_ fd: Int32) {
            var one: Int32 = 1
            _ = setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
        }

        /// BSD `sendfile(file, socket, offset, &length, nil, 0)`: bytes sent (reported even with EAGAIN), or -1 with errno.
        static func sendfile(socket: Int32, file: Int32, offset: inout Int, count: Int) -> Int {
            var length = off_t(count)
            let result = Darwin.sendfile(file, socket, off_t(offset), &length, nil, 0)
            if length > 0 {
                offset += Int(length)
                return Int(length)
            }
            return result == 0 ? 0 : -1
        }

        /// `accept` then `fcntl`: a non-blocking, close-on-exec connection socket, or -1 with errno.
        static func accept(
            _ fd: Int32, _ address: UnsafeMutablePointer<sockaddr>, _ length: UnsafeMutablePointer<socklen_t>
        ) -> Int32 {
            let connection = Darwin.accept(fd, address, length)
            guard connection >= 0 else { return connection }
            guard makeNonBlocking(connection) else {
                let saved = errno
                _ = Darwin.close(connection)
                errno = saved
                return -1
            }
            return connection
        }

        /// `bind(2)`.
        @inline(__always)
        static func bind(_ fd: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Int32 {
            Darwin.bind(fd, address, length)
        }

        /// `gmtime_r`.
        @inline(__always)
        static func gmtime(_ time: inout time_t, _ out: inout BrokenDownTime) { _ = Darwin.gmtime_r(&time, &out) }
    }
#endif
