import Testing

@testable import HTTPServer

private let second: UInt64 = 1_000_000_000

/// The test timeouts with minimum rates (100 B/s in, 1000 B/s out, 2 s of grace), then `change`.
private func timeouts(_ change: (inout HTTPTimeouts) -> Void = { _ in }) -> HTTPTimeouts {
    .forTests {
        $0.minimumBodyRate = 100
        $0.minimumResponseRate = 1000
        $0.minimumRateGrace = 2
        change(&$0)
    }
}

@Test
func deadline_EachKindLastsItsTimeout_FromNow() {
    var deadline = HTTPConnectionDeadline(timeouts: timeouts())
    #expect(deadline.at == 0)
    let now = 1000 * second
    deadline.set(.header, now: now)
    #expect(deadline.at == now + 10 * second)
    #expect(deadline.kind == .header)
    deadline.set(.idle, now: now)
    #expect(deadline.at == now + 30 * second)
    #expect(deadline.kind == .idle)
    #expect(!deadline.isRate)
    deadline.clear()
    #expect(deadline.at == 0)
    #expect(deadline.kind == .idle)  // what the next event reads
}

@Test
func deadline_BodyFallsBelowTheMinimumRate_BeforeItStalls() {
    var deadline = HTTPConnectionDeadline(timeouts: timeouts())
    let start = 1000 * second
    // Nothing yet: the grace period (2 s) comes before the stall timeout (20 s).
    deadline.startTransfer(.body, now: start)
    #expect(deadline.at == start + 2 * second)
    #expect(deadline.isRate)
    // 500 bytes at 100 B/s buy 5 s more: 7 s from the start.
    deadline.progressed(500, now: start + second)
    #expect(deadline.at == start + 7 * second)
    #expect(deadline.isRate)
    // Fast enough that the stall timeout from the last progress comes first.
    deadline.progressed(1_000_000, now: start + 3 * second)
    #expect(deadline.at == start + 23 * second)
    #expect(!deadline.isRate)
}

@Test
func deadline_StartsWithBytesThatCameWithTheHead_AndWritesUseTheResponseRate() {
    var deadline = HTTPConnectionDeadline(timeouts: timeouts())
    let start = 50 * second
    deadline.startTransfer(.body, now: start, transferred: 300)
    #expect(deadline.at == start + 5 * second)  // 2 s grace + 300 B at 100 B/s
    deadline.startTransfer(.write, now: start)
    #expect(deadline.kind == .write)
    #expect(deadline.at == start + 2 * second)  // the 300 bytes of the body do not count
    deadline.progressed(4000, now: start)
    #expect(deadline.at == start + 6 * second)  // 2 s + 4000 B at 1000 B/s
}

@Test
func deadline_WithoutAMinimumRate_OnlyTheStallCounts() {
    var deadline = HTTPConnectionDeadline(timeouts: timeouts { $0.minimumBodyRate = 0 })
    let start = 7 * second
    deadline.startTransfer(.body, now: start)
    #expect(deadline.at == start + 20 * second)
    #expect(!deadline.isRate)
}

@Test
func deadline_LingeringPausesEndAtTheLingerTimeInAll() {
    var deadline = HTTPConnectionDeadline(timeouts: timeouts())
    let start = 100 * second
    deadline.startLingering(now: start)
    #expect(deadline.kind == .linger)
    #expect(deadline.at == start + 5 * second)
    deadline.lingered(now: start + 4 * second)
    #expect(deadline.at == start + 9 * second)
    // A client that keeps sending is cut off 12 s after the start, not 5 s after its last bytes.
    deadline.lingered(now: start + 10 * second)
    #expect(deadline.at == start + 12 * second)
}

@Test
func deadline_FollowsAWebSocketsDeadline() {
    var deadline = HTTPConnectionDeadline(timeouts: timeouts())
    deadline.follow(42 * second)
    #expect(deadline.at == 42 * second)
}
