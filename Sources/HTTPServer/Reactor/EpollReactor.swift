#if os(Linux)
    import Foundation
    import Synchronization

    /// Readiness from an edge-triggered epoll instance on a thread of its own: the listener with
    /// EPOLLEXCLUSIVE (one loop wakes per new connection), each connection registered once for
    /// input, output and peer hang-up, and an eventfd for tasks posted from other threads.
    /// Edge-triggered, so `interest` has nothing to do: a connection reads until EAGAIN and the
    /// next byte or free buffer space brings a new event.
    // @unchecked: thread-confined; all but `posted` is touched only on its epoll thread.
    final class EpollReactor: Reactor, @unchecked Sendable {
        private static let listenerToken = UInt64.max - 1
        private static let wakeToken = UInt64.max
        private static let maxEvents: Int32 = 256

        private unowned(unsafe) let loop: EventLoop
        private let epfd: Int32
        private let wakeFD: Int32
        private var listenerWatched = false

        /// Tasks posted from other threads, under the mutex (taken per post and per wake-up).
        private let posted = Mutex(PostedTasks())

        /// What `posted` guards.
        private struct PostedTasks {
            var tasks: [LoopTask] = []
            var wakePending = false
            var stopped = false
        }

        /// Edge-triggered with EPOLLRDHUP: a short read means the socket is empty until the next event.
        let shortReadDrainsSocket = true

        /// Creates the epoll instance and its wake-up eventfd.
        init(loop: EventLoop) throws {
            self.loop = loop
            epfd = Epoll.create()
            guard epfd >= 0 else { throw SocketError.eventLoopFailed("epoll_create1: \(SocketError.errnoText)") }
            wakeFD = Epoll.eventFD()
            guard wakeFD >= 0 else {
                SystemCalls.close(epfd)
                throw SocketError.eventLoopFailed("eventfd: \(SocketError.errnoText)")
            }
            _ = Epoll.control(epfd, Epoll.ctlAdd, wakeFD, events: Epoll.input, token: Self.wakeToken)
        }

        deinit {
            SystemCalls.close(epfd)
            SystemCalls.close(wakeFD)
        }

        func start() {
            let thread = Thread { [self] in self.run() }
            thread.name = "galleryd.http.loop.\(loop.index)"
            thread.start()
        }

        func watchListener() throws {
            guard addListener() else {
                throw SocketError.eventLoopFailed("epoll_ctl(listener): \(SocketError.errnoText)")
            }
        }

        private func addListener() -> Bool {
            listenerWatched =
                Epoll.control(
                    epfd, Epoll.ctlAdd, loop.listener.fd, events: Epoll.input | Epoll.exclusive,
                    token: Self.listenerToken) == 0
            return listenerWatched
        }

        private func removeListener() {
            if listenerWatched {
                listenerWatched = false
                _ = Epoll.control(epfd, Epoll.ctlDel, loop.listener.fd, events: 0, token: 0)
            }
        }

        func pauseListener() { removeListener() }

        func resumeListener() { if !listenerWatched { _ = addListener() } }

        func unwatchListener() {
            removeListener()
            loop.listener.release()
        }

        func watch(_ fd: Int32) -> Bool {
            let mask = Epoll.input | Epoll.output | Epoll.readHangUp | Epoll.edgeTriggered
            return Epoll.control(epfd, Epoll.ctlAdd, fd, events: mask, token: UInt64(fd)) == 0
        }

        @inline(__always)
        func interest(_ fd: Int32, read: Bool, write: Bool) {}

        /// Closing removes the descriptor from the epoll set.
        func unwatchAndClose(_ fd: Int32) { SystemCalls.close(fd) }

        func post(_ task: @escaping () -> Void) {
            let posting = LoopTask(run: task)
            let (inline, wake) = posted.withLock { posted -> (Bool, Bool) in
                if posted.stopped { return (true, false) }
                posted.tasks.append(posting)
                if !posted.wakePending {
                    posted.wakePending = true
                    return (false, true)
                }
                return (false, false)
            }
            if inline {
                task()
                return
            }
            if wake {
                var one: UInt64 = 1
                _ = SystemCalls.write(wakeFD, &one, 8)
            }
        }

        private func run() {
            let events = UnsafeMutableRawPointer.allocate(
                byteCount: Epoll.eventSize * Int(Self.maxEvents), alignment: 8)
            defer { events.deallocate() }
            loop.updateClock()
            var nextTick = loop.now + loop.tickNanoseconds
            while !loop.shouldStop {
                let now = loop.now
                let waitMs = nextTick > now ? Int32(min((nextTick - now) / 1_000_000 + 1, 1000)) : 0
                let n = Epoll.wait(epfd, events, Self.maxEvents, waitMs)
                loop.updateClock()
                if n < 0 && errno != EINTR {
                    loop.server.logger.critical("epoll_wait failed: \(SocketError.errnoText)")
                    break
                }
                var i = 0
                while i < Int(n) {
                    let (mask, token) = Epoll.event(events, i)
                    i += 1
                    switch token {
                    case Self.listenerToken:
                        loop.acceptConnections()
                    case Self.wakeToken:
                        runTasks()
                    default:
                        loop.connectionEvent(Int32(truncatingIfNeeded: token), Self.events(mask))
                    }
                }
                if loop.now >= nextTick {
                    loop.tick()
                    nextTick = loop.now + loop.tickNanoseconds
                }
            }
            loop.finish()
            let leftovers = posted.withLock { posted in
                posted.stopped = true
                defer { posted.tasks = [] }
                return posted.tasks
            }
            for task in leftovers { task.run() }
            loop.didExit()
        }

        /// What an epoll event mask means to a connection (also `DispatchEpollReactor`'s).
        @inline(__always)
        static func events(_ mask: UInt32) -> ReactorEvents {
            var events: ReactorEvents = []
            if mask & (Epoll.input | Epoll.readHangUp | Epoll.hangUp | Epoll.error) != 0 { events.insert(.readable) }
            if mask & (Epoll.output | Epoll.hangUp | Epoll.error) != 0 { events.insert(.writable) }
            if mask & (Epoll.readHangUp | Epoll.hangUp | Epoll.error) != 0 { events.insert(.hangUp) }
            return events
        }

        private func runTasks() {
            var value: UInt64 = 0
            _ = SystemCalls.read(wakeFD, &value, 8)
            let batch = posted.withLock { posted in
                posted.wakePending = false
                defer { posted.tasks.removeAll(keepingCapacity: true) }
                return posted.tasks
            }
            for task in batch { task.run() }
        }
    }
#endif
