/// The one deadline of a connection and what it stands for: the head's read time, the keep-alive
/// idle time, a body read or a response write (a stall timeout, or sooner the minimum transfer
/// rate), or a lingering close. The connection asks what to do when it passes; the event loop's
/// tick compares `at` with its clock. Only ever touched on the connection's loop.
struct HTTPConnectionDeadline: Sendable {
    /// Which timeout the deadline stands for.
    enum Kind { case header, idle, body, write, linger }

    /// Monotonic nanoseconds after which the connection times out; 0 for none.
    private(set) var at: UInt64 = 0
    /// The timeout `at` stands for.
    private(set) var kind = Kind.header
    /// Whether `at` is the minimum-rate deadline of a transfer (rather than a stall), for the
    /// 408's message and the log.
    private(set) var isRate = false

    private let timeouts: HTTPTimeouts
    /// When the body being read or the response being written started, and its bytes so far,
    /// for the minimum transfer rates.
    private var transferStart: UInt64 = 0
    private var transferred = 0
    /// When a lingering close must end whatever the client does.
    private var lingerEnd: UInt64 = 0

    /// No deadline yet; `timeouts` gives each kind its length.
    init(timeouts: HTTPTimeouts) {
        self.timeouts = timeouts
    }

    /// The deadline `kind`'s timeout from `now`.
    mutating func set(_ kind: Kind, now: UInt64) {
        self.kind = kind
        isRate = false
        at = now + Self.nanoseconds(seconds(kind))
    }

    /// No deadline (a handler runs, the connection closed); the kind stays for what comes next.
    mutating func clear() { at = 0 }

    /// A deadline kept elsewhere (an upgraded connection's WebSocket), taken as it is.
    mutating func follow(_ deadline: UInt64) { at = deadline }

    /// A body read (`.body`) or a response write (`.write`) starts now, with `transferred` bytes
    /// already done (a body that came with its head).
    mutating func startTransfer(_ kind: Kind, now: UInt64, transferred: Int = 0) {
        transferStart = now
        self.transferred = transferred
        setTransfer(kind, now: now)
    }

    /// The transfer moved `bytes` further: the stall timeout starts again, and the rate deadline
    /// moves by the time those bytes buy at the minimum rate.
    mutating func progressed(_ bytes: Int, now: UInt64) {
        transferred += bytes
        setTransfer(kind, now: now)
    }

    /// A lingering close starts: at most `lingerTime` in all, `lingerTimeout` per pause.
    mutating func startLingering(now: UInt64) {
        lingerEnd = now + Self.nanoseconds(timeouts.lingerTime)
        lingered(now: now)
    }

    /// Input arrived (and was dropped) while lingering: the pause timeout starts again, never
    /// past the lingering's end.
    mutating func lingered(now: UInt64) {
        set(.linger, now: now)
        at = min(at, lingerEnd)
    }

    /// The stall timeout of a transfer, or sooner the moment its average rate since it started
    /// falls under the minimum.
    private mutating func setTransfer(_ kind: Kind, now: UInt64) {
        set(kind, now: now)
        let rate = kind == .body ? timeouts.minimumBodyRate : timeouts.minimumResponseRate
        guard rate > 0 else { return }
        // The grace period, plus the time the bytes so far would take at the minimum rate.
        let allowed = max(0, timeouts.minimumRateGrace) + Double(transferred) / rate
        let rateDeadline = transferStart &+ UInt64(min(allowed, 1e9) * 1e9)
        if rateDeadline < at {
            at = rateDeadline
            isRate = true
        }
    }

    private func seconds(_ kind: Kind) -> Double {
        switch kind {
        case .header: return timeouts.headerRead
        case .idle: return timeouts.idleKeepAlive
        case .body: return timeouts.bodyRead
        case .write: return timeouts.write
        case .linger: return timeouts.lingerTimeout
        }
    }

    private static func nanoseconds(_ seconds: Double) -> UInt64 { UInt64(max(0, seconds) * 1e9) }
}
