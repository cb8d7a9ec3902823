@testable import HTTPServer

extension HTTPTimeouts {
    /// The timeouts the connection tests count with, each its own round number of seconds (header
    /// 10, idle 30, body 20, write 25, linger 5 and at most 12) and no minimum rates; `change`
    /// sets what a test needs besides. Shared by the deadline and the state machine tests.
    static func forTests(_ change: (inout HTTPTimeouts) -> Void = { _ in }) -> HTTPTimeouts {
        var timeouts = HTTPTimeouts()
        timeouts.headerRead = 10
        timeouts.idleKeepAlive = 30
        timeouts.bodyRead = 20
        timeouts.write = 25
        timeouts.minimumBodyRate = 0
        timeouts.minimumResponseRate = 0
        timeouts.lingerTimeout = 5
        timeouts.lingerTime = 12
        change(&timeouts)
        return timeouts
    }
}
