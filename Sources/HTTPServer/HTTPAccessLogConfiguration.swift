/// Where and how the server writes its access log (nginx's `access_log … buffer= flush=`).
public struct HTTPAccessLogConfiguration: Sendable {
    /// The line format; `.off` by default for an embedded server, galleryd turns it on.
    public var format: HTTPAccessLogFormat = .off
    /// Bytes each event loop buffers before lines are dropped (and counted) rather than waiting for
    /// the writer: a slow stderr or journald must never stall a loop. nginx's default is 64 KiB, but
    /// nginx writes a full buffer itself; here a separate thread does, and a loop pinned with it to
    /// one core fills 64 KiB (about 600 lines) before the writer is scheduled: at 130,000 requests a
    /// second it dropped 0.1–0.2% of lines. 1 MiB (about 100 ms of lines at that rate) dropped none (decision 041,
    /// round 10).
    public var bufferBytes: Int = 1 << 20
    /// The longest a line waits in a buffer before the writer thread writes it.
    public var flushInterval: Double = 1
    /// The descriptor lines are written to (standard error by default); the server does not close it.
    public var fileDescriptor: Int32 = 2

    /// The defaults: off, 1 MiB per loop, flushed every second, to standard error.
    public init() {}

    /// A log in `format` with the other defaults.
    public init(format: HTTPAccessLogFormat) {
        self.format = format
    }
}
