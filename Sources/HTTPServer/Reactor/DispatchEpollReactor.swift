#if os(Linux)
    import CLinuxShim
    import Dispatch
    import Foundation

    /// The Dispatch backend on Linux: the loop's serial `DispatchQueue` runs everything, as in
    /// `DispatchReactor`, but the sockets are watched by an edge-triggered epoll set of the loop's own
    /// (registered as `EpollReactor` registers them), and Dispatch watches only that set, with one
    /// `DispatchSourceRead`. Each time it fires, the handler takes every ready socket from the set.
    ///
    /// libdispatch on Linux makes every read source one-shot: each event is an `ioctl(SIOCINQ)` and
    /// a hop from its manager thread to a worker, and the source is re-armed by a second hop back to
    /// the manager (an eventfd write and an `epoll_ctl`). With a source per connection that is paid
    /// per request; here once per batch of ready sockets (docs/decisions/041). The per-connection
    /// `DispatchReactor` remains the backend where the system's multiplexer is kqueue (macOS).
    // @unchecked: thread-confined; everything is touched only on its serial `queue`.
    final class DispatchEpollReactor: Reactor, @unchecked Sendable {
        private static let listenerToken = UInt64.max - 1
        private static let maxEvents: Int32 = 256
        /// Batches taken from the set per firing before Dispatch gets a turn (it fires again while
        /// sockets are ready: the set is readable, level-triggered, as long as its ready list is not empty).
        private static let batchesPerFiring = 4

        /// The loop owns the reactor; the source and queued blocks capture it strongly, so it lives
        /// as long as anything queued may still touch it (cancelling the source breaks the cycle).
        private unowned(unsafe) let loop: EventLoop
        /// The loop's queue: the set's handler, tasks and ticks run here, one at a time.
        let queue: DispatchQueue
        private let epfd: Int32
        private let events: UnsafeMutableRawPointer
        private var source: DispatchSourceRead?
        private var timer: DispatchSourceTimer?
        private var listenerWatched = false
        private var stopped = false

        /// Edge-triggered with EPOLLRDHUP, as `EpollReactor`: a short read means the socket is empty.
        let shortReadDrainsSocket = true

        /// Creates the loop's queue and epoll set; nothing is watched yet.
        init(loop: EventLoop) throws {
            self.loop = loop
            epfd = Epoll.create()
            guard epfd >= 0 else { throw SocketError.eventLoopFailed("epoll_create1: \(SocketError.errnoText)") }
            events = UnsafeMutableRawPointer.allocate(byteCount: Epoll.eventSize * Int(Self.maxEvents), alignment: 8)
            queue = DispatchQueue(label: "galleryd.http.loop.\(loop.index)")
        }

        deinit {
            events.deallocate()
            // Closed here only when the source never existed; otherwise in its cancel handler.
            if source == nil { SystemCalls.close(epfd) }
        }

        func start() {
            queue.async { [self, loop = self.loop] in
                loop.updateClock()
                let source = DispatchSource.makeReadSource(fileDescriptor: epfd, queue: queue)
                source.setEventHandler { [self] in drain() }
                // Dispatch requires the descriptor open until the source is cancelled.
                let descriptor = epfd
                source.setCancelHandler { SystemCalls.close(descriptor) }
                self.source = source
                source.resume()
                let timer = DispatchSource.makeTimerSource(queue: queue)
                let tick = DispatchTimeInterval.nanoseconds(Int(loop.tickNanoseconds))
                timer.schedule(deadline: .now() + tick, repeating: tick, leeway: .milliseconds(1))
                timer.setEventHandler { [self, loop] in
                    loop.updateClock()
                    loop.tick()
                    afterEvent()
                }
                timer.resume()
                self.timer = timer
                afterEvent()
            }
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

        /// Edge-triggered: nothing to pause or resume.
        @inline(__always)
        func interest(_ fd: Int32, read: Bool, write: Bool) {}

        /// No Dispatch source watches a connection, so its descriptor closes at once (which also
        /// removes it from the set).
        func unwatchAndClose(_ fd: Int32) { SystemCalls.close(fd) }

        func post(_ task: @escaping () -> Void) {
            let task = LoopTask(run: task)
            queue.async { [self, loop = self.loop] in
                loop.updateClock()
                task.run()
                afterEvent()
            }
        }

        /// The set is readable: hands every ready socket to the loop, a few batches at most.
        private func drain() {
            guard !stopped else { return }
            for _ in 0..<Self.batchesPerFiring {
                let n = Epoll.wait(epfd, events, Self.maxEvents, 0)
                guard n > 0 else { break }
                loop.updateClock()
                for i in 0..<Int(n) {
                    let (mask, token) = Epoll.event(events, i)
                    if token == Self.listenerToken {
                        loop.acceptConnections()
                    } else {
                        loop.connectionEvent(Int32(truncatingIfNeeded: token), EpollReactor.events(mask))
                    }
                }
                if n < Self.maxEvents || stopped { break }
            }
            afterEvent()
        }

        /// After every event: once the loop is done, closes what is left and lets `wait()` return.
        @inline(__always)
        private func afterEvent() {
            guard !stopped, loop.shouldStop else { return }
            stopped = true
            timer?.cancel()
            timer = nil
            source?.cancel()
            // finish() closes every connection at once (no source watches them) and the listener's share.
            loop.finish()
            loop.didExit()
        }
    }
#endif
