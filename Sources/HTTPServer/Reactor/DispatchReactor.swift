import Dispatch
import Foundation

/// Readiness from Dispatch where it sits on kqueue (the Dispatch backend off Linux; on Linux it is
/// `DispatchEpollReactor`, decision 041): one serial queue per loop, a `DispatchSourceRead` on the listener
/// and on each connection, a `DispatchSourceWrite` made on a connection's first blocked flush
/// and resumed only while a flush is blocked, and a `DispatchSourceTimer` for the tick.
///
/// Dispatch sources are level-triggered: a read source whose connection cannot read now (its
/// handler runs, or its response is being written) is suspended, or a pipelined request would
/// fire it without end. A descriptor is closed only in the cancel handler of its last source,
/// as Dispatch requires (closing earlier lets a new socket reuse the number under a live source).
// @unchecked: thread-confined; everything is touched only on its serial `queue`.
final class DispatchReactor: Reactor, @unchecked Sendable {
    /// A connection's sources and whether each is suspended (Dispatch counts suspensions, so
    /// every suspend must be matched by exactly one resume).
    // @unchecked: touched only on the reactor's serial queue.
    private final class Watch: @unchecked Sendable {
        let read: DispatchSourceRead
        var readSuspended = false
        var write: DispatchSourceWrite?
        var writeSuspended = true
        /// Sources still to run their cancel handler; the last one closes the descriptor.
        var pendingCancels = 0

        init(read: DispatchSourceRead) { self.read = read }
    }

    /// The loop owns the reactor; blocks and source handlers capture the loop strongly, so it
    /// lives as long as anything queued may still touch it (cancelling the sources at stop breaks
    /// the cycles through their handlers).
    private unowned(unsafe) let loop: EventLoop
    /// The loop's queue: every handler, task and tick runs here, one at a time.
    let queue: DispatchQueue
    private var listenerSource: DispatchSourceRead?
    private var listenerSuspended = true
    private var timer: DispatchSourceTimer?
    private var watches: [Watch?] = []
    private var started = false
    private var stopped = false
    /// Connections whose sources are cancelled but whose cancel handlers (which close the
    /// descriptor) have not run yet. The loop has exited only once they are closed, so the
    /// server's `wait()` returns with no socket of this loop left open (in CLOSE_WAIT).
    private var closing = 0
    /// The loop stopped while `closing` was above zero: the last cancel handler lets it exit.
    private var exitWaitsForCloses = false
    /// How long a stopped loop waits for its cancel handlers before exiting anyway.
    private static let closeWait = DispatchTimeInterval.seconds(2)

    /// Connections read until EAGAIN: a source may fire once for data and end of stream together.
    let shortReadDrainsSocket = false
    let usesInterest = true

    /// Creates the loop's queue; nothing is watched yet.
    init(loop: EventLoop) {
        self.loop = loop
        queue = DispatchQueue(label: "galleryd.http.loop.\(loop.index)")
    }

    func start() {
        queue.async { [self, loop = self.loop] in
            started = true
            loop.updateClock()
            let timer = DispatchSource.makeTimerSource(queue: queue)
            let tick = DispatchTimeInterval.nanoseconds(Int(loop.tickNanoseconds))
            timer.schedule(deadline: .now() + tick, repeating: tick, leeway: .milliseconds(1))
            timer.setEventHandler { [self, loop = self.loop] in
                loop.updateClock()
                loop.tick()
                afterEvent()
            }
            timer.resume()
            self.timer = timer
            if let listenerSource, listenerSuspended {
                listenerSuspended = false
                listenerSource.resume()
            }
            afterEvent()
        }
    }

    func watchListener() throws {
        let source = DispatchSource.makeReadSource(fileDescriptor: loop.listener.fd, queue: queue)
        source.setEventHandler { [self, loop = self.loop] in
            loop.updateClock()
            loop.acceptConnections()
            afterEvent()
        }
        let listener = loop.listener
        source.setCancelHandler { listener.release() }
        listenerSource = source
        listenerSuspended = true  // resumed by start()
    }

    func pauseListener() {
        guard let listenerSource, !listenerSuspended else { return }
        listenerSuspended = true
        listenerSource.suspend()
    }

    func resumeListener() {
        guard let listenerSource, listenerSuspended, started else { return }
        listenerSuspended = false
        listenerSource.resume()
    }

    func unwatchListener() {
        guard let source = listenerSource else { return }
        listenerSource = nil
        source.cancel()
        if listenerSuspended {
            // A source that never ran would never call its cancel handler: resume it so it does.
            listenerSuspended = false
            source.resume()
        }
    }

    func watch(_ fd: Int32) -> Bool {
        let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
        source.setEventHandler { [self, loop = self.loop] in
            loop.updateClock()
            // Dispatch may fire with 0 bytes estimated (a spurious wake or an end of stream):
            // the connection's read finds out which.
            loop.connectionEvent(fd, .readable)
            afterEvent()
        }
        let watch = Watch(read: source)
        watch.pendingCancels = 1
        source.setCancelHandler { [self, loop = self.loop] in withExtendedLifetime(loop) { cancelled(watch, fd) } }
        let slot = Int(fd)
        if slot >= watches.count {
            watches.append(contentsOf: repeatElement(nil, count: max(slot + 1 - watches.count, watches.count)))
        }
        watches[slot] = watch
        source.resume()
        return true
    }

    func interest(_ fd: Int32, read: Bool, write: Bool) {
        let slot = Int(fd)
        guard slot < watches.count, let watch = watches[slot] else { return }
        if read == watch.readSuspended {
            watch.readSuspended = !read
            if read {
                watch.read.resume()
                // Bytes (or the FIN) that came while the source was suspended may not fire it
                // again: look once. A spurious look costs one EAGAIN.
                queue.async { [self, loop = self.loop] in
                    guard slot < watches.count, watches[slot] === watch else { return }
                    loop.updateClock()
                    loop.connectionEvent(fd, .readable)
                    afterEvent()
                }
            } else {
                watch.read.suspend()
            }
        }
        if write {
            if watch.write == nil {
                let source = DispatchSource.makeWriteSource(fileDescriptor: fd, queue: queue)
                source.setEventHandler { [self, loop = self.loop] in
                    loop.updateClock()
                    loop.connectionEvent(fd, .writable)
                    afterEvent()
                }
                source.setCancelHandler { [self, loop = self.loop] in
                    withExtendedLifetime(loop) { cancelled(watch, fd) }
                }
                watch.pendingCancels += 1
                watch.write = source
            }
            if watch.writeSuspended {
                watch.writeSuspended = false
                watch.write!.resume()
            }
        } else if let source = watch.write, !watch.writeSuspended {
            watch.writeSuspended = true
            source.suspend()
        }
    }

    func unwatchAndClose(_ fd: Int32) {
        let slot = Int(fd)
        guard slot < watches.count, let watch = watches[slot] else {
            SystemCalls.close(fd)
            return
        }
        watches[slot] = nil
        closing += 1
        // Cancel, then resume what is suspended: a suspended source never runs its cancel handler.
        watch.read.cancel()
        if watch.readSuspended {
            watch.readSuspended = false
            watch.read.resume()
        }
        if let write = watch.write {
            write.cancel()
            if watch.writeSuspended {
                watch.writeSuspended = false
                write.resume()
            }
        }
    }

    private func cancelled(_ watch: Watch, _ fd: Int32) {
        watch.pendingCancels -= 1
        guard watch.pendingCancels == 0 else { return }
        SystemCalls.close(fd)
        closing -= 1
        if closing == 0 { exitOnceClosed() }
    }

    /// Lets `wait()` return, once: right away, or after the last pending close (at most
    /// `closeWait` later, should a cancel handler never run).
    private func exitOnceClosed() {
        guard exitWaitsForCloses else { return }
        exitWaitsForCloses = false
        loop.didExit()
    }

    func post(_ task: @escaping () -> Void) {
        let task = LoopTask(run: task)
        queue.async { [self, loop = self.loop] in
            loop.updateClock()
            task.run()
            afterEvent()
        }
    }

    /// After every event: once the loop is done, closes what is left and lets `wait()` return.
    @inline(__always)
    private func afterEvent() {
        guard !stopped, loop.shouldStop else { return }
        stopped = true
        timer?.cancel()
        timer = nil
        loop.finish()
        // finish() closed what was left; Dispatch runs those cancel handlers (and closes) later.
        exitWaitsForCloses = true
        if closing == 0 {
            exitOnceClosed()
        } else {
            queue.asyncAfter(deadline: .now() + Self.closeWait) { [self, loop = self.loop] in
                withExtendedLifetime(loop) { exitOnceClosed() }
            }
        }
    }
}
