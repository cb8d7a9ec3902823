/// How the event loops learn that sockets are ready (`io_backend` in the configuration).
public enum HTTPIOBackend: String, Sendable, CaseIterable {
    /// One serial Dispatch queue per loop, the sockets watched by Dispatch sources (on Linux one
    /// source over the loop's epoll set): the design card's choice, and the only backend on macOS.
    case dispatch
    /// Edge-triggered epoll on one thread per loop (Linux only).
    case epoll

    /// The backend used when none is configured. The design card asks for Dispatch unless it measures
    /// more than 5% behind epoll; on a quiet Linux machine it measured 0.40× epoll on bench/http.sh
    /// and 0.45× on bench/bucket.sh (docs/decisions/004-epoll-default-on-linux.md), so epoll is the Linux
    /// default and Dispatch the default (and only backend) elsewhere.
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
