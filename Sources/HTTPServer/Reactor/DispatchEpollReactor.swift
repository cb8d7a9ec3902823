#if os(Linux)
    import CLinuxShim
    import Dispatch
    import Foundation

    /// The Dispatch backend on Linux: the loop's serial `DispatchQueue` runs everything, as in
    /// `DispatchReactor`, but the sockets are watched by the loop's `EpollSet` (as `EpollReactor`
    /// watches them), and Dispatch watches only that set, with one `DispatchSourceRead`. Each time
    /// it fires, the handler takes every ready socket from the set.
    ///
    /// libdispatch on Linux makes every read source one-shot: each event is an `ioctl(SIOCINQ)` and
    /// a hop from its manager thread to a worker, and the source is re-armed by a second hop back to
    /// the manager (an eventfd write and an `epoll_ctl`). With a source per connection that is paid
    /// per request; here once per batch of ready sockets (docs/decisions/041). The per-connection
    /// `DispatchReactor` remains the backend where the system's multiplexer is kqueue (macOS).
    // @unchecked: thread-confined; everything is touched only on its serial `queue`.
    final class DispatchEpollReactor: EpollSetReactor, @unchecked Sendable {
        /// Batches taken from the set per firing before Dispatch gets a turn (it fires again while
        /// sockets are ready: the set is readable, level-triggered, as long as its ready list is not empty).
        private static let batchesPerFiring = 4

        /// The loop owns the reactor; the source and queued blocks capture it strongly, so it lives
        /// as long as anything queued may still touch it (cancelling the source breaks the cycle).
        unowned(unsafe) let loop: EventLoop
        let epollSet: EpollSet
        /// The loop's queue: the set's handler, tasks and ticks run here, one at a time.
        let queue: DispatchQueue
        private var source: DispatchSourceRead?
        private var timer: DispatchSourceTimer?
        private var stopped = false

        /// Creates the loop's queue and epoll set; nothing is watched yet.
        init(loop: EventLoop) throws {
            self.loop = loop
            epollSet = try EpollSet(loop: loop)
            queue = DispatchQueue(label: "galleryd.http.loop.\(loop.index)")
        }

        deinit {
            // Closed here only when the source never existed; otherwise in its cancel handler.
            if source == nil { SystemCalls.close(epollSet.fd) }
        }

        func start() {
            queue.async { [self, loop = self.loop] in
                loop.updateClock()
                let descriptor = epollSet.fd
                let source = DispatchSource.makeReadSource(fileDescriptor: descriptor, queue: queue)
                source.setEventHandler { [self] in drain() }
                // Dispatch requires the descriptor open until the source is cancelled.
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
                let n = epollSet.wait(timeoutMs: 0)
                guard n > 0 else { break }
                loop.updateClock()
                _ = epollSet.deliver(n, to: loop)
                if n < EpollSet.maxEvents || stopped { break }
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
