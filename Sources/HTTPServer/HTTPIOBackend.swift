/// How the event loops learn that sockets are ready (`io_backend` in the configuration).
public enum HTTPIOBackend: String, Sendable, CaseIterable {
    /// Dispatch sources on one serial queue per loop: the design card's choice, and the only
    /// backend on macOS.
    case dispatch
    /// Edge-triggered epoll on one thread per loop (Linux only).
    case epoll

    /// The backend used when none is configured: Dispatch, as the design card says, on Linux too,
    /// because it did not measure more than 5% behind epoll there (docs/architecture.md, "I/O backend").
    public static var platformDefault: HTTPIOBackend { .dispatch }

    /// The backends this platform has, default first.
    public static var available: [HTTPIOBackend] {
        #if os(Linux)
        return [platformDefault] + allCases.filter { $0 != platformDefault }
        #else
        return [.dispatch]
        #endif
    }
}
