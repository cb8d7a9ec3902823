#if os(Linux)
import Glibc

/// epoll(7) and eventfd(2), which Swift's Glibc module does not export. The symbols are looked up
/// once with dlsym and called through `@convention(c)` pointers, so the C calling convention is
/// kept without a C shim target.
enum Epoll {
    /// Event bits and control operations from <sys/epoll.h>: EPOLLIN.
    static let input: UInt32 = 0x001
    /// EPOLLOUT.
    static let output: UInt32 = 0x004
    /// EPOLLERR.
    static let error: UInt32 = 0x008
    /// EPOLLHUP.
    static let hangUp: UInt32 = 0x010
    /// EPOLLRDHUP: the peer shut down its sending side.
    static let readHangUp: UInt32 = 0x2000
    /// EPOLLEXCLUSIVE: wake one loop per new connection.
    static let exclusive: UInt32 = 1 << 28
    /// EPOLLET.
    static let edgeTriggered: UInt32 = 1 << 31

    /// `EPOLL_CTL_ADD`.
    static let ctlAdd: Int32 = 1
    /// `EPOLL_CTL_DEL`.
    static let ctlDel: Int32 = 2

    // sizeof(struct epoll_event) and the offset of its data: packed (12 bytes) on x86-64, 16 elsewhere.
    #if arch(x86_64)
    /// Bytes per `struct epoll_event`.
    static let eventSize = 12
    /// Offset of `epoll_event.data`.
    static let dataOffset = 4
    #else
    /// Bytes per `struct epoll_event`.
    static let eventSize = 16
    /// Offset of `epoll_event.data`.
    static let dataOffset = 8
    #endif

    private typealias CreateFn = @convention(c) (Int32) -> Int32
    private typealias CtlFn = @convention(c) (Int32, Int32, Int32, UnsafeMutableRawPointer?) -> Int32
    private typealias WaitFn = @convention(c) (Int32, UnsafeMutableRawPointer?, Int32, Int32) -> Int32
    private typealias EventFdFn = @convention(c) (UInt32, Int32) -> Int32
    private typealias Accept4Fn = @convention(c) (
        Int32, UnsafeMutablePointer<sockaddr>?, UnsafeMutablePointer<socklen_t>?, Int32
    ) -> Int32

    private static func symbol<T>(_ name: String, as type: T.Type) -> T {
        guard let pointer = dlsym(UnsafeMutableRawPointer(bitPattern: 0), name) else {
            fatalError("libc has no \(name)")
        }
        return unsafeBitCast(pointer, to: type)
    }

    private static let createFn = symbol("epoll_create1", as: CreateFn.self)
    private static let ctlFn = symbol("epoll_ctl", as: CtlFn.self)
    private static let waitFn = symbol("epoll_wait", as: WaitFn.self)
    private static let eventFdFn = symbol("eventfd", as: EventFdFn.self)
    private static let accept4Fn = symbol("accept4", as: Accept4Fn.self)

    /// `epoll_create1(EPOLL_CLOEXEC)`.
    static func create() -> Int32 { createFn(Int32(O_CLOEXEC)) }

    /// `epoll_ctl` with an event whose data is the file descriptor `token`.
    static func control(_ epfd: Int32, _ op: Int32, _ fd: Int32, events: UInt32, token: UInt64) -> Int32 {
        var storage = (UInt64(0), UInt64(0))
        return withUnsafeMutableBytes(of: &storage) { raw in
            raw.storeBytes(of: events, toByteOffset: 0, as: UInt32.self)
            raw.storeBytes(of: token, toByteOffset: dataOffset, as: UInt64.self)
            return ctlFn(epfd, op, fd, raw.baseAddress)
        }
    }

    /// `epoll_wait` into a buffer of `capacity` events.
    static func wait(_ epfd: Int32, _ buffer: UnsafeMutableRawPointer, _ capacity: Int32, _ timeoutMs: Int32) -> Int32 {
        waitFn(epfd, buffer, capacity, timeoutMs)
    }

    /// The event mask and token of event `i` in a buffer filled by `wait`.
    @inline(__always)
    static func event(_ buffer: UnsafeMutableRawPointer, _ i: Int) -> (events: UInt32, token: UInt64) {
        let base = buffer + i * eventSize
        return (base.loadUnaligned(as: UInt32.self), base.loadUnaligned(fromByteOffset: dataOffset, as: UInt64.self))
    }

    /// `eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)`.
    static func eventFD() -> Int32 { eventFdFn(0, Int32(O_NONBLOCK | O_CLOEXEC)) }

    /// `accept4(fd, addr, len, SOCK_NONBLOCK | SOCK_CLOEXEC)`.
    static func accept(_ fd: Int32, _ address: UnsafeMutablePointer<sockaddr>, _ length: UnsafeMutablePointer<socklen_t>) -> Int32 {
        accept4Fn(fd, address, length, Int32(O_NONBLOCK | O_CLOEXEC))
    }
}
#endif
