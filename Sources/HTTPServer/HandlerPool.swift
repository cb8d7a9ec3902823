import Foundation

/// A fixed number of threads that run handlers which may block (database, disk), so they never
/// stall the threads that read and write sockets. Work beyond the thread count queues.
// @unchecked: its queue is guarded by `condition` (idle threads wait on it, which Mutex cannot do).
final class HandlerPool: @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [() -> Void] = []
    private var head = 0
    private var stopping = false
    private let threadCount: Int
    private var started = 0

    /// Starts `threads` worker threads.
    init(threads: Int) {
        threadCount = max(1, threads)
        for index in 0..<threadCount {
            let thread = Thread { [self] in self.work() }
            thread.name = "galleryd.http.handler.\(index)"
            thread.stackSize = 1 << 20
            thread.start()
        }
    }

    /// Queues a job.
    func submit(_ job: @escaping () -> Void) {
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    /// Jobs waiting for a thread, and jobs started since the pool was made (a progress counter:
    /// a queue that stays non-empty while this stands still means every thread is stuck).
    var progress: (queued: Int, started: Int) {
        condition.lock()
        defer { condition.unlock() }
        return (jobs.count - head, started)
    }

    /// Lets the threads exit once the queue is empty. Jobs already queued still run.
    func stop() {
        condition.lock()
        stopping = true
        condition.broadcast()
        condition.unlock()
    }

    private func work() {
        while true {
            condition.lock()
            while head == jobs.count && !stopping { condition.wait() }
            if head == jobs.count {
                condition.unlock()
                return
            }
            let job = jobs[head]
            head += 1
            started &+= 1
            if head == jobs.count {
                jobs.removeAll(keepingCapacity: true)
                head = 0
            } else if head > 1024 {
                jobs.removeFirst(head)
                head = 0
            }
            condition.unlock()
            job()
        }
    }
}
