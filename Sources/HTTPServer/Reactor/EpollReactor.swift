#if os(Linux)
    import Foundation

    /// Readiness from the loop's edge-triggered `EpollSet` on a thread of its own, and an eventfd
    /// in the same set for tasks posted from other threads. Edge-triggered, so `interest` has
    /// nothing to do: a connection reads until EAGAIN and the next byte or free buffer space
    /// brings a new event.
    // @unchecked: thread-confined; all but `posted` is touched only on its epoll thread.
    final class EpollReactor: EpollSetReactor, @unchecked Sendable {
        /// The loop owns the reactor and outlives its thread.
        unowned(unsafe) let loop: EventLoop
        let epollSet: EpollSet
        private let wakeFD: Int32

        /// Tasks posted from other threads, under the mutex (taken per post and per wake-up): a
        /// sleeping one, as every handler thread posts its answer here (docs/decisions/057).
        private let posted = SleepingMutex(PostedTasks())
        /// The batch being run, swapped with `posted.tasks` under the lock, so that neither side
        /// allocates a new array per wake-up (epoll thread only).
        private var running: [LoopTask] = []

        /// What `posted` guards.
        private struct PostedTasks {
            var tasks: [LoopTask] = []
            var wakePending = false
            var stopped = false
        }

        /// Creates the epoll set and its wake-up eventfd.
        init(loop: EventLoop) throws {
            self.loop = loop
            epollSet = try EpollSet(loop: loop)
            wakeFD = Epoll.eventFD()
            guard wakeFD >= 0 else {
                SystemCalls.close(epollSet.fd)
                throw SocketError.eventLoopFailed("eventfd: \(SocketError.errnoText)")
            }
            epollSet.watchReactorDescriptor(wakeFD)
        }

        deinit {
            SystemCalls.close(epollSet.fd)
            SystemCalls.close(wakeFD)
        }

        func start() {
            let thread = Thread { [self] in self.run() }
            thread.name = "galleryd.http.loop.\(loop.index)"
            thread.start()
        }

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

        private func run() { run(loop) }

        /// The loop's turns, with the loop as an argument: borrowed for the whole run, where each use
        /// of the `unowned(unsafe)` property is a retain and a release (three a wake-up, decision
        /// 041, round 9).
        private func run(_ loop: EventLoop) {
            loop.updateClock()
            var nextTick = loop.now + loop.tickNanoseconds
            while !loop.shouldStop {
                let now = loop.now
                let waitMs = nextTick > now ? Int32(min((nextTick - now) / 1_000_000 + 1, 1000)) : 0
                let n = epollSet.wait(timeoutMs: waitMs)
                loop.updateClock()
                if n < 0 && errno != EINTR {
                    loop.server.logger.critical("epoll_wait failed: \(SocketError.errnoText)")
                    break
                }
                // Posted tasks run after the batch's socket events.
                if epollSet.deliver(n, to: loop) { runTasks() }
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

        private func runTasks() {
            var value: UInt64 = 0
            _ = SystemCalls.read(wakeFD, &value, 8)
            posted.withLock { posted in
                posted.wakePending = false
                swap(&running, &posted.tasks)
            }
            for task in running { task.run() }
            running.removeAll(keepingCapacity: true)
        }
    }
#endif
