extension EventLoop {
    /// The reactor for `backend`; epoll where the platform has it, Dispatch everywhere (over an epoll
    /// set on Linux, over a source per connection elsewhere).
    static func makeReactor(_ backend: HTTPIOBackend, loop: EventLoop) throws -> Reactor {
        switch backend {
        case .dispatch:
            #if os(Linux)
                // One Dispatch source over the loop's own epoll set, not one per connection (041).
                return try DispatchEpollReactor(loop: loop)
            #else
                return DispatchReactor(loop: loop)
            #endif
        case .epoll:
            #if os(Linux)
                return try EpollReactor(loop: loop)
            #else
                throw SocketError.eventLoopFailed("io_backend epoll needs Linux; use dispatch")
            #endif
        }
    }
}
