import Foundation

/// Everything the server needs to know before `start()`.
public struct HTTPServerConfiguration: Sendable {
    /// The address to listen on: `"::"` (every IPv6 and IPv4 address), `"0.0.0.0"`, `"127.0.0.1"`, `"::1"`
    /// or a host name.
    public var host: String = "::"
    /// The TCP port; 0 asks the kernel for a free one (read it back from `HTTPServer.port`).
    public var port: Int = 8080
    /// The listen backlog: connections the kernel queues before we accept them.
    public var backlog: Int32 = 1024
    /// The most open connections; past it a new connection gets a 503 and is closed, so an overload
    /// degrades instead of exhausting file descriptors.
    public var maxConnections: Int = 4096
    /// Request size limits.
    public var limits = HTTPLimits()
    /// Client timeouts.
    public var timeouts = HTTPTimeouts()
    /// Threads that run handlers which may block (database, disk). Bounds concurrent blocking work.
    public var handlerThreads: Int = 32
    /// How the loops wait for sockets: Dispatch sources or epoll (see `HTTPIOBackend.platformDefault`).
    public var ioBackend: HTTPIOBackend = .platformDefault
    /// Event loops reading and writing sockets (a thread or a serial queue each); defaults to the number of cores.
    public var eventLoopThreads: Int = ProcessInfo.processInfo.activeProcessorCount
    /// How long `wait()` lets in-flight requests finish after `shutdown()` before force-closing them.
    public var drainTimeout: Double = 10
    /// Where bodies larger than `limits.inMemoryBodyThreshold` are streamed.
    public var temporaryDirectory: String = NSTemporaryDirectory()
    /// The access log: format, per-loop buffer and output (off by default).
    public var accessLog = HTTPAccessLogConfiguration()
    /// An already-listening socket to serve on instead of binding `host:port` (systemd socket activation).
    public var listenFileDescriptor: Int32? = nil
    /// Fields added to every response the server writes (handlers', error responders', its own
    /// 404s and 503s) unless the response sets a field of the same name: security policies such as
    /// `X-Content-Type-Options`. At most 64.
    public var defaultHeaders = HTTPHeaders()

    /// The defaults: `[::]:8080`.
    public init() {}

    /// A configuration for the given address, with defaults for the rest.
    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }
}
