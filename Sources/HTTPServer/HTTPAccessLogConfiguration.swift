/// Where and how the server writes its access log (nginx's `access_log … buffer= flush=`).
public struct HTTPAccessLogConfiguration: Sendable {
    /// The line format; `.off` by default for an embedded server, galleryd turns it on.
    public var format: HTTPAccessLogFormat = .off
    /// Bytes each event loop buffers before lines are dropped (and counted) rather than waiting for
    /// the writer: a slow stderr or journald must never stall a loop. nginx's default is 64 KiB.
    public var bufferBytes: Int = 64 * 1024
    /// The longest a line waits in a buffer before the writer thread writes it.
    public var flushInterval: Double = 1
    /// The descriptor lines are written to (standard error by default); the server does not close it.
    public var fileDescriptor: Int32 = 2

    /// The defaults: off, 64 KiB per loop, flushed every second, to standard error.
    public init() {}

    /// A log in `format` with the other defaults.
    public init(format: HTTPAccessLogFormat) {
        self.format = format
    }
}
