import Testing

@testable import HTTPServer

// The connection's state machine without a socket: each test plays the events a connection would
// report and checks the actions it gets back (what the socket tests in HTTPServerTests,
// LingeringCloseTests and TransferRateTests see from outside).

private let second: UInt64 = 1_000_000_000
private let start = 1000 * second

/// `#expect` cannot take a mutating call on a local machine; events are compared through this.
private func expectEqual<T: Equatable>(_ value: T, _ expected: T, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(value == expected, sourceLocation: sourceLocation)
}

private func machine(
    maxLingerBytes: Int = 1000, timeouts: HTTPTimeouts = .forTests(), shortReadDrainsSocket: Bool = true
) -> HTTPConnectionStateMachine {
    var limits = HTTPLimits()
    limits.maxLingerBytes = maxLingerBytes
    return HTTPConnectionStateMachine(
        limits: limits, timeouts: timeouts, shortReadDrainsSocket: shortReadDrainsSocket, now: start)
}

/// A request without a body taken from the buffer through to its handler.
private func receiveBodylessRequest(_ m: inout HTTPConnectionStateMachine, buffered: Int, keepAlive: Bool = true)
    -> [HTTPConnectionStateMachine.Action]
{
    m.headReceived(keepAlive: keepAlive, expectContinue: false)
    return [m.bodyWanted(hasBody: false, buffered: buffered, now: start), m.bodyComplete(), m.resume()]
}

/// The response to the current request written in one flush.
private func answer(_ m: inout HTTPConnectionStateMachine, buffered: Int, now: UInt64 = start)
    -> [HTTPConnectionStateMachine.Action]
{
    let keepAlive = m.responseStarted(closeRequested: false, draining: false, now: now)
    return [
        keepAlive ? .wait : .close(.afterResponse), m.resume(), m.flushed(written: 100, result: .done, now: now),
        m.exchangeFinished(buffered: buffered, draining: false, now: now),
    ]
}

@Test
func stateMachine_AnswersPipelinedRequestsInOrder_FromOneRead() {
    var m = machine()
    m.socketEvents(readable: true, hangUp: false)
    expectEqual(m.resume(), .parse)
    expectEqual(m.parserNeedsInput(requestStarted: false), .read(minimum: 4 * 1024))
    // Two requests arrive in one short read (which empties the socket).
    expectEqual(m.bytesRead(120, room: 4096, now: start), .parse)
    // The first is parsed (60 bytes of the second stay buffered) and dispatched; until it is
    // answered nothing more is parsed or read, so the second cannot overtake it.
    expectEqual(receiveBodylessRequest(&m, buffered: 60), [.parse, .dispatch, .wait])
    #expect(m.state == .handling)
    #expect(!m.wantsRead)
    #expect(m.deadline == 0)
    expectEqual(answer(&m, buffered: 60), [.wait, .flush, .finishExchange, .parse])
    // The second, already buffered, is under the head timeout, not the idle one.
    #expect(m.state == .head)
    #expect(m.timer.kind == .header)
    expectEqual(receiveBodylessRequest(&m, buffered: 0), [.parse, .dispatch, .wait])
    expectEqual(answer(&m, buffered: 0), [.wait, .flush, .finishExchange, .parse])
    #expect(m.timer.kind == .idle)
    #expect(m.deadline == start + 30 * second)
    // The read emptied the socket: wait for the reactor rather than recv again.
    expectEqual(m.parserNeedsInput(requestStarted: false), .wait)
    m.socketEvents(readable: true, hangUp: false)
    expectEqual(m.parserNeedsInput(requestStarted: false), .read(minimum: 4 * 1024))
}

@Test
func stateMachine_ClosesAfterTheResponse_WhenTheRequestOrTheServerSaysSo() {
    var m = machine()
    _ = receiveBodylessRequest(&m, buffered: 0, keepAlive: false)
    expectEqual(m.responseStarted(closeRequested: false, draining: false, now: start), false)
    expectEqual(m.flushed(written: 10, result: .done, now: start), .finishExchange)
    expectEqual(m.exchangeFinished(buffered: 0, draining: false, now: start), .close(.afterResponse))

    var handlerClose = machine()
    _ = receiveBodylessRequest(&handlerClose, buffered: 0)
    expectEqual(handlerClose.responseStarted(closeRequested: true, draining: false, now: start), false)

    var draining = machine()
    _ = receiveBodylessRequest(&draining, buffered: 0)
    expectEqual(draining.responseStarted(closeRequested: false, draining: true, now: start), false)
    expectEqual(draining.exchangeFinished(buffered: 0, draining: true, now: start), .close(.afterResponse))
}

@Test
func stateMachine_SendsContinue_OnlyWhenTheBodyIsWantedAndNotYetSent() {
    var m = machine()
    m.headReceived(keepAlive: true, expectContinue: true)
    expectEqual(m.bodyWanted(hasBody: true, buffered: 0, now: start), .sendContinue)
    expectEqual(m.continueSent(completely: true), .parse)
    #expect(m.continueSent)
    #expect(m.state == .body)
    expectEqual(m.parserNeedsInput(requestStarted: true), .read(minimum: 16 * 1024))

    // The client started sending the body anyway: no 100.
    var eager = machine()
    eager.headReceived(keepAlive: true, expectContinue: true)
    expectEqual(eager.bodyWanted(hasBody: true, buffered: 10, now: start), .parse)
    #expect(!eager.continueSent)

    // Not asked for.
    var plain = machine()
    plain.headReceived(keepAlive: true, expectContinue: false)
    expectEqual(plain.bodyWanted(hasBody: true, buffered: 0, now: start), .parse)
}

@Test
func stateMachine_SendsNoContinue_AfterAnEarlyFinalResponse() {
    var m = machine()
    m.headReceived(keepAlive: true, expectContinue: true)
    // 413 on the head: the body is never wanted, the 100 never sent, and the unread body forces a
    // lingering close.
    m.answeredBeforeBody(unreadBody: true)
    expectEqual(m.responseStarted(closeRequested: false, draining: false, now: start), false)
    var actions = [m.resume(), m.flushed(written: 100, result: .done, now: start)]
    actions.append(m.exchangeFinished(buffered: 0, draining: false, now: start))
    #expect(actions == [.flush, .finishExchange, .startLingering])
    #expect(!m.continueSent)
    // A body wanted later for the same head (which the connection never does) still gets no 100.
    expectEqual(m.bodyWanted(hasBody: true, buffered: 0, now: start), .parse)
}

@Test
func stateMachine_ClosesAfterTheResponse_WhenContinueWasCutShort() {
    var m = machine()
    m.headReceived(keepAlive: true, expectContinue: true)
    expectEqual(m.bodyWanted(hasBody: true, buffered: 0, now: start), .sendContinue)
    expectEqual(m.continueSent(completely: false), .parse)
    expectEqual(m.bodyComplete(), .dispatch)
    expectEqual(m.responseStarted(closeRequested: false, draining: false, now: start), false)
}

@Test
func stateMachine_LingersAfterAnErrorResponse_BoundedByBytesAndTime() {
    var m = machine(maxLingerBytes: 1000)
    m.headReceived(keepAlive: true, expectContinue: false)
    m.answeredBeforeBody(unreadBody: true)
    _ = m.responseStarted(closeRequested: false, draining: false, now: start)
    expectEqual(m.flushed(written: 100, result: .done, now: start), .finishExchange)
    expectEqual(m.exchangeFinished(buffered: 300, draining: false, now: start), .startLingering)
    // The buffered part of the refused body counts against the limit.
    expectEqual(m.lingerStarted(discarded: 300, now: start), .discardInput)
    #expect(m.state == .lingering)
    #expect(m.wantsRead)
    #expect(m.timer.kind == .linger)
    #expect(m.deadline == start + 5 * second)
    // Each read restarts the pause timeout, never past lingerTime (12 s) in all.
    expectEqual(m.discarded(400, now: start + 4 * second), .discardInput)
    #expect(m.deadline == start + 9 * second)
    expectEqual(m.readWouldBlock(), .wait)
    m.socketEvents(readable: true, hangUp: false)
    expectEqual(m.resume(), .discardInput)
    expectEqual(m.discarded(200, now: start + 8 * second), .discardInput)
    #expect(m.deadline == start + 12 * second)
    #expect(m.timerFired(requestStarted: false) == .close(.timedOut))
    // Past maxLingerBytes: close whatever the client still sends.
    expectEqual(m.discarded(101, now: start + 9 * second), .close(.lingerEnded))
}

@Test
func stateMachine_LingeringEnds_WhenTheClientCloses() {
    var m = machine()
    m.headReceived(keepAlive: true, expectContinue: false)
    m.requestFailed(unreadBody: true)
    _ = m.responseStarted(closeRequested: false, draining: false, now: start)
    _ = m.flushed(written: 1, result: .done, now: start)
    expectEqual(m.exchangeFinished(buffered: 0, draining: false, now: start), .startLingering)
    expectEqual(m.lingerStarted(discarded: 0, now: start), .discardInput)
    expectEqual(m.readEnded(), .close(.lingerEnded))
    #expect(m.readFailed() == .close(.lingerEnded))

    // A failure with the whole request read closes without lingering.
    var read = machine()
    _ = receiveBodylessRequest(&read, buffered: 0)
    read.requestFailed(unreadBody: false)
    _ = read.responseStarted(closeRequested: false, draining: false, now: start)
    expectEqual(read.exchangeFinished(buffered: 0, draining: false, now: start), .close(.afterResponse))

    // The client already closed: nothing to linger for.
    var gone = machine()
    gone.headReceived(keepAlive: true, expectContinue: false)
    gone.answeredBeforeBody(unreadBody: true)
    expectEqual(gone.readEnded(), .parse)
    _ = gone.responseStarted(closeRequested: false, draining: false, now: start)
    expectEqual(gone.exchangeFinished(buffered: 0, draining: false, now: start), .close(.afterResponse))
}

@Test
func stateMachine_HeadDeadline_ClosesQuietlyWhenIdle_AndAnswers408MidHead() {
    let m = machine()
    #expect(m.timer.kind == .header)
    #expect(m.deadline == start + 10 * second)
    #expect(m.timerFired(requestStarted: false) == .close(.timedOut))
    #expect(m.timerFired(requestStarted: true) == .respondTimeout(.head))
    #expect(m.isIdle(requestStarted: false))
    #expect(!m.isIdle(requestStarted: true))
}

@Test
func stateMachine_IdleDeadline_ClosesQuietly_AndTheFirstByteStartsTheHeadTimeout() {
    var m = machine()
    _ = receiveBodylessRequest(&m, buffered: 0)
    _ = answer(&m, buffered: 0)
    #expect(m.timer.kind == .idle)
    #expect(m.timerFired(requestStarted: false) == .close(.timedOut))
    expectEqual(m.bytesRead(5, room: 4096, now: start + 7 * second), .parse)
    #expect(m.timer.kind == .header)
    #expect(m.deadline == start + 17 * second)
}

@Test
func stateMachine_BodyDeadline_Answers408_StalledOrBelowTheMinimumRate() {
    var m = machine()
    m.headReceived(keepAlive: true, expectContinue: false)
    expectEqual(m.bodyWanted(hasBody: true, buffered: 0, now: start), .parse)
    #expect(m.timer.kind == .body)
    #expect(m.deadline == start + 20 * second)
    // Progress moves the stall timeout.
    _ = m.bytesRead(100, room: 16 * 1024, now: start + 3 * second)
    #expect(m.deadline == start + 23 * second)
    #expect(m.timerFired(requestStarted: false) == .respondTimeout(.bodyStall))

    var slow = HTTPTimeouts.forTests()
    slow.minimumBodyRate = 100
    slow.minimumRateGrace = 2
    var rated = machine(timeouts: slow)
    rated.headReceived(keepAlive: true, expectContinue: false)
    _ = rated.bodyWanted(hasBody: true, buffered: 0, now: start)
    #expect(rated.deadline == start + 2 * second)
    #expect(rated.timerFired(requestStarted: true) == .respondTimeout(.bodyRate))
}

@Test
func stateMachine_WriteDeadline_ResetsTheStalledClient() {
    var m = machine()
    _ = receiveBodylessRequest(&m, buffered: 0)
    _ = m.responseStarted(closeRequested: false, draining: false, now: start)
    #expect(m.timer.kind == .write)
    #expect(m.deadline == start + 25 * second)
    #expect(m.timerFired(requestStarted: false) == .resetStalledWrite(belowMinimumRate: false))
}

@Test
func stateMachine_WaitsForRoom_WhenTheSendBufferIsFull() {
    var m = machine()
    _ = receiveBodylessRequest(&m, buffered: 0)
    _ = m.responseStarted(closeRequested: false, draining: false, now: start)
    expectEqual(m.resume(), .flush)
    expectEqual(m.flushed(written: 1000, result: .blocked, now: start + 2 * second), .wait)
    #expect(m.wantsWrite)
    #expect(!m.wantsRead)
    // The bytes that went out restart the write timeout.
    #expect(m.deadline == start + 27 * second)
    m.socketEvents(readable: false, hangUp: false)
    expectEqual(m.resume(), .flush)
    expectEqual(m.flushed(written: 0, result: .waitingForStream, now: start + 3 * second), .wait)
    #expect(!m.wantsWrite)
    #expect(m.deadline == start + 27 * second)
    expectEqual(m.flushed(written: 500, result: .done, now: start + 4 * second), .finishExchange)
    #expect(!m.wantsWrite)

    var failing = machine()
    _ = receiveBodylessRequest(&failing, buffered: 0)
    _ = failing.responseStarted(closeRequested: false, draining: false, now: start)
    expectEqual(failing.flushed(written: 0, result: .failed, now: start), .abortExchange)
}

@Test
func stateMachine_PeerClosingMidRequest_Closes_AfterWhatIsBufferedIsParsed() {
    var m = machine()
    expectEqual(m.bytesRead(20, room: 4096, now: start), .parse)
    expectEqual(m.readEnded(), .parse)
    #expect(!m.wantsRead)
    expectEqual(m.parserNeedsInput(requestStarted: true), .close(.peerClosedMidRequest))

    var body = machine()
    body.headReceived(keepAlive: true, expectContinue: false)
    _ = body.bodyWanted(hasBody: true, buffered: 0, now: start)
    _ = body.readEnded()
    expectEqual(body.parserNeedsInput(requestStarted: false), .close(.peerClosedMidRequest))

    var between = machine()
    expectEqual(between.readEnded(), .parse)
    expectEqual(between.parserNeedsInput(requestStarted: false), .close(.peerClosed))
}

@Test
func stateMachine_ReadsOnAfterAHangUp_UntilRecvReturnsTheEnd() {
    var m = machine()
    m.socketEvents(readable: true, hangUp: true)
    // A short read does not mean the socket is empty: the FIN is behind the data.
    expectEqual(m.bytesRead(10, room: 4096, now: start), .parse)
    expectEqual(m.parserNeedsInput(requestStarted: true), .read(minimum: 4 * 1024))

    // A reactor whose short reads do not drain the socket (Dispatch) reads on as well.
    var level = machine(shortReadDrainsSocket: false)
    _ = level.bytesRead(10, room: 4096, now: start)
    expectEqual(level.parserNeedsInput(requestStarted: true), .read(minimum: 4 * 1024))
}

@Test
func stateMachine_Upgrade_HandsTheSocketToTheWebSocket_AndFollowsItsDeadline() {
    var m = machine()
    m.headReceived(keepAlive: true, expectContinue: false)
    expectEqual(m.upgraded(), .driveWebSocket)
    #expect(m.isIdle(requestStarted: true))
    #expect(!m.wantsRead)
    #expect(!m.wantsWrite)
    expectEqual(m.resume(), .driveWebSocket)
    expectEqual(m.webSocketProgressed(finished: false, deadline: start + 60 * second), .wait)
    #expect(m.deadline == start + 60 * second)
    #expect(m.timerFired(requestStarted: false) == .timeOutWebSocket)
    expectEqual(m.webSocketProgressed(finished: true, deadline: 0), .close(.webSocketFinished))
    expectEqual(m.closed(), .upgraded)
    #expect(!m.isOpen)
    #expect(m.deadline == 0)
    expectEqual(m.resume(), .wait)
    expectEqual(m.webSocketProgressed(finished: false, deadline: 5), .wait)
    #expect(m.deadline == 0)
}

@Test
func stateMachine_Closed_DoesNothingMore() {
    var m = machine()
    _ = receiveBodylessRequest(&m, buffered: 0)
    expectEqual(m.closed(), .handling)
    expectEqual(m.resume(), .wait)
    #expect(m.timerFired(requestStarted: true) == .wait)
    #expect(!m.wantsRead)
    #expect(!m.isOpen)
}
