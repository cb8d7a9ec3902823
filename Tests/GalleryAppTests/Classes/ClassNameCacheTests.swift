import Foundation
import Synchronization
import Testing

@testable import GalleryApp

/// The in-memory cache of built-in classes' app fields and permissions: a value is read once and
/// shared, a change forgets it, and a read that began before a change is not kept after it.
@Suite struct ClassNameCacheTests {
    @Test func aValue_IsReadOnce_AndShared() {
        let cache = ClassNameCache<[String]>()
        var reads = 0
        let first = cache.held("Photo") {
            reads += 1
            return ["title"]
        }
        let second = cache.held("Photo") {
            reads += 1
            return ["other"]
        }
        #expect(reads == 1)
        #expect(first === second)
        #expect(second.value == ["title"])
    }

    @Test func forget_DropsOneClass_OrEvery() {
        let cache = ClassNameCache<Int>()
        _ = cache.held("Photo") { 1 }
        _ = cache.held("Gallery") { 2 }
        cache.forget("Photo")
        #expect(cache.held("Photo") { 10 }.value == 10)
        #expect(cache.held("Gallery") { 20 }.value == 2)
        cache.forget()
        #expect(cache.held("Gallery") { 30 }.value == 30)
    }

    @Test func aReadBegunBeforeAChange_IsAnsweredButNotKept() {
        let cache = ClassNameCache<String>()
        let stale = cache.held("Photo") {
            cache.forget("Photo")  // a change committed while this read was on its way
            return "before the change"
        }
        #expect(stale.value == "before the change")
        #expect(cache.held("Photo") { "after the change" }.value == "after the change")
    }

    @Test func readersOnManyThreads_SeeOneValue_WhileChangesComeAndGo() {
        let cache = ClassNameCache<Int>()
        let seen = Mutex<Set<Int>>([])
        DispatchQueue.concurrentPerform(iterations: 800) { index in
            if index % 100 == 0 { cache.forget("Photo") }
            let value = cache.held("Photo") { 7 }.value
            seen.withLock { _ = $0.insert(value) }
        }
        #expect(seen.withLock { $0 } == [7])
    }
}
