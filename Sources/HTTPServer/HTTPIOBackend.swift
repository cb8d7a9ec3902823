/// How the event loops learn that sockets are ready (`io_backend` in the configuration).
public enum HTTPIOBackend: String, Sendable, CaseIterable {
    /// Dispatch sources on one serial queue per loop: the design card's choice, and the only
    /// backend on macOS.
    case dispatch
    /// Edge-triggered epoll on one thread per loop (Linux only).
    case epoll

    /// The backend used when none is configured. On Linux that is epoll, which measured ahead of
    /// Dispatch by more than the 5% the design allows (docs/architecture.md, "I/O backend");
    /// elsewhere it is Dispatch, the only one there is.
    public static var platformDefault: HTTPIOBackend {
        #if os(Linux)
        return .epoll
        #else
        return .dispatch
        #endif
    }

    /// The backends this platform has, default first.
    public static var available: [HTTPIOBackend] {
        #if os(Linux)
        return [platformDefault] + allCases.filter { $0 != platformDefault }
        #else
        return [.dispatch]
        #endif
    }
}
