#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension SystemdNotifier {
    #if os(Linux)
        /// A close-on-exec datagram socket type (Glibc imports the types as an enum).
        static let datagramSocketType = Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        /// Send flags: never SIGPIPE.
        static let sendFlags = Int32(MSG_NOSIGNAL)
    #else
        /// A datagram socket type (Darwin has no SOCK_CLOEXEC; systemd is Linux-only anyway).
        static let datagramSocketType = SOCK_DGRAM
        /// Send flags: a Unix datagram socket raises no SIGPIPE.
        static let sendFlags: Int32 = 0
    #endif
}
