/// How long the server waits on a client, in seconds. Each one stops a slow or silent client
/// from holding a connection (and its memory) forever.
public struct HTTPTimeouts: Sendable {
    /// Time to receive a whole request head, measured from its first byte (from the accept for a
    /// connection's first request) and not reset by progress, so a slowloris client that trickles
    /// one byte at a time is still cut off. 10 s covers slow mobile links. → 408, then close.
    public var headerRead: Double = 10
    /// How long an idle keep-alive connection may wait for its next request. 30 s lets a client
    /// reuse its connection across a page of thumbnails without pinning sockets for long.
    public var idleKeepAlive: Double = 30
    /// Longest pause without progress while reading a body. Uploads may be long but must move. → 408.
    public var bodyRead: Double = 30
    /// Longest pause without progress while writing a response (the client stopped reading).
    public var write: Double = 30
    /// Slowest average rate a request body may arrive at, in bytes per second, counted from the
    /// body's start (after `minimumRateGrace`); 0 for none. Progress alone is not enough:
    /// without a rate, a client sending one byte just inside `bodyRead` holds its connection for
    /// as long as it likes. 240 B/s is ASP.NET Kestrel's default. → 408, then close.
    public var minimumBodyRate: Double = 240
    /// Slowest average rate a response may be read at, in bytes per second, after the grace
    /// period; 0 for none. A client reading a large preview a byte at a time is dropped.
    public var minimumResponseRate: Double = 240
    /// Seconds a transfer gets on top of the time its bytes would take at the minimum rate, so a
    /// slow start (TCP slow start, a radio waking up) is not punished.
    public var minimumRateGrace: Double = 5
    /// Longest pause while discarding the rest of a refused request after its error response
    /// (lingering close, RFC 9112 §9.6): nginx's `lingering_timeout`. Without it a client still
    /// sending the body would get a reset instead of the answer.
    public var lingerTimeout: Double = 5
    /// Longest total time a lingering close keeps reading: nginx's `lingering_time`.
    public var lingerTime: Double = 30

    /// The defaults.
    public init() {}
}
