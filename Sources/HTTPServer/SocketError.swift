import Foundation

/// What went wrong setting up the listening socket. Each case carries the `errno` text captured at the failure.
public enum SocketError: Error, Sendable, CustomStringConvertible {
    /// The host is neither an IP address nor a name that resolves.
    case invalidAddress(String)
    /// `socket(2)` failed.
    case socketFailed(String)
    /// `setsockopt(2)` failed for the named option.
    case optionFailed(option: String, message: String)
    /// `bind(2)` failed (address in use, permission denied…).
    case bindFailed(address: String, message: String)
    /// `listen(2)` failed.
    case listenFailed(String)
    /// The given listening descriptor is not a usable socket.
    case invalidDescriptor(Int32, String)
    /// epoll or eventfd could not be set up.
    case eventLoopFailed(String)
    /// `start()` was called twice.
    case alreadyStarted

    public var description: String {
        switch self {
        case .invalidAddress(let host): return "invalid listen address \(host)"
        case .socketFailed(let m): return "socket() failed: \(m)"
        case .optionFailed(let o, let m): return "setsockopt(\(o)) failed: \(m)"
        case .bindFailed(let a, let m): return "bind(\(a)) failed: \(m)"
        case .listenFailed(let m): return "listen() failed: \(m)"
        case .invalidDescriptor(let fd, let m): return "listen fd \(fd) unusable: \(m)"
        case .eventLoopFailed(let m): return "event loop setup failed: \(m)"
        case .alreadyStarted: return "server already started"
        }
    }

    /// The text of the current `errno`.
    static var errnoText: String { String(cString: strerror(errno)) + " (errno \(errno))" }
}
