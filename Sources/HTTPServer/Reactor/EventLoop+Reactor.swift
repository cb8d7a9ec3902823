extension EventLoop {
    /// The reactor for `backend`; epoll where the platform has it, Dispatch everywhere.
    static func makeReactor(_ backend: HTTPIOBackend, loop: EventLoop) throws -> Reactor {
        switch backend {
        case .dispatch:
            return DispatchReactor(loop: loop)
        case .epoll:
            #if os(Linux)
                return try EpollReactor(loop: loop)
            #else
                throw SocketError.eventLoopFailed("io_backend epoll needs Linux; use dispatch")
            #endif
        }
    }
}
