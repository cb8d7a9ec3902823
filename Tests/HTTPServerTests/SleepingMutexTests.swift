import Foundation
import Testing

@testable import HTTPServer

/// The pthread mutex behind the `ManifestCache` and the epoll loop's posted tasks: one thread at a time changes the state, a
/// body's result comes back, and a throwing body's changes stay as `Mutex` keeps them.
@Suite struct SleepingMutexTests {
    @Test func threadsTakingItTogether_ChangeTheStateOneAtATime() {
        let counter = SleepingMutex((count: 0, inside: 0, overlapped: false))
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            for _ in 0..<5_000 {
                counter.withLock { state in
                    state.inside += 1
                    if state.inside > 1 { state.overlapped = true }
                    state.count += 1
                    state.inside -= 1
                }
            }
        }
        let final = counter.withLock { $0 }
        #expect(final.count == 40_000)
        #expect(!final.overlapped)
    }

    @Test func withLock_ReturnsTheBodysResult_AndRethrows_KeepingWhatTheBodyChanged() {
        struct Refused: Error {}
        let names = SleepingMutex(["Photo"])
        #expect(names.withLock { $0.count } == 1)
        #expect(throws: Refused.self) {
            try names.withLock { names in
                names.append("Gallery")
                throw Refused()
            }
        }
        #expect(names.withLock { $0 } == ["Photo", "Gallery"])
    }

    @Test func aWaiter_GetsTheLock_OnceTheHolderLetsGo() {
        let gate = SleepingMutex(0)
        let waiterDone = DispatchSemaphore(value: 0)
        let holding = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            gate.withLock { value in
                holding.signal()
                release.wait()
                value = 1
            }
        }
        holding.wait()
        Thread.detachNewThread {
            gate.withLock { $0 += 10 }
            waiterDone.signal()
        }
        #expect(waiterDone.wait(timeout: .now() + .milliseconds(100)) == .timedOut)
        release.signal()
        #expect(waiterDone.wait(timeout: .now() + .seconds(10)) == .success)
        #expect(gate.withLock { $0 } == 11)
    }
}
