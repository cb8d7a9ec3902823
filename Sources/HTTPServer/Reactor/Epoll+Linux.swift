#if os(Linux)
    import CLinuxShim
    import Glibc

    /// epoll(7), eventfd(2) and accept4(2) through the CLinuxShim wrappers (Swift's Glibc module does
    /// not export them), named for what the event loop does with them.
    enum Epoll {
        /// EPOLLIN.
        static let input: UInt32 = galleryd_epollin
        /// EPOLLOUT.
        static let output: UInt32 = galleryd_epollout
        /// EPOLLERR.
        static let error: UInt32 = galleryd_epollerr
        /// EPOLLHUP.
        static let hangUp: UInt32 = galleryd_epollhup
        /// EPOLLRDHUP: the peer shut down its sending side.
        static let readHangUp: UInt32 = galleryd_epollrdhup
        /// EPOLLEXCLUSIVE: wake one loop per new connection.
        static let exclusive: UInt32 = galleryd_epollexclusive
        /// EPOLLET.
        static let edgeTriggered: UInt32 = galleryd_epollet

        /// `EPOLL_CTL_ADD`.
        static let ctlAdd = galleryd_epoll_ctl_add
        /// `EPOLL_CTL_DEL`.
        static let ctlDel = galleryd_epoll_ctl_del

        /// Bytes per `struct epoll_event` (packed, 12, on x86-64).
        static let eventSize = Int(galleryd_epoll_event_size())

        /// `epoll_create1(EPOLL_CLOEXEC)`.
        static func create() -> Int32 { galleryd_epoll_create() }

        /// `epoll_ctl` with an event whose data is `token`.
        static func control(_ epfd: Int32, _ op: Int32, _ fd: Int32, events: UInt32, token: UInt64) -> Int32 {
            galleryd_epoll_ctl(epfd, op, fd, events, token)
        }

        /// `epoll_wait` into a buffer of `capacity` events.
        static func wait(_ epfd: Int32, _ buffer: UnsafeMutableRawPointer, _ capacity: Int32, _ timeoutMs: Int32)
            -> Int32
        {
            galleryd_epoll_wait(epfd, buffer, capacity, timeoutMs)
        }

        /// The event mask and token of event `i` in a buffer filled by `wait`.
        @inline(__always)
        static func event(_ buffer: UnsafeMutableRawPointer, _ i: Int) -> (events: UInt32, token: UInt64) {
            (galleryd_epoll_event_mask(buffer, Int32(i)), galleryd_epoll_event_token(buffer, Int32(i)))
        }

        /// `eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)`.
        static func eventFD() -> Int32 { galleryd_eventfd() }

        /// `accept4(fd, addr, len, SOCK_NONBLOCK | SOCK_CLOEXEC)`.
        static func accept(
            _ fd: Int32, _ address: UnsafeMutablePointer<sockaddr>, _ length: UnsafeMutablePointer<socklen_t>
        ) -> Int32 {
            galleryd_accept4(fd, address, length)
        }
    }
#endif
