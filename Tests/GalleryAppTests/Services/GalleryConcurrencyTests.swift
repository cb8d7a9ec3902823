import Foundation
import Synchronization
import Testing

@testable import GalleryApp

/// Many clients changing one gallery at once, over HTTP from separate threads: the order must
/// stay a permutation 0…n−1 and every successful operation must be accounted for.
@Suite struct GalleryConcurrencyTests {
    /// What one concurrent operation did, as its response said.
    enum Outcome {
        case inserted(photo: String)
        case removed(photo: String)
        case moved
        case refused(code: Int)
    }

    /// Results filled in by several threads, under a lock.
    final class Results<T: Sendable>: Sendable {
        private let values: Mutex<[Result<T, Error>?]>

        init(count: Int) { values = Mutex(Array(repeating: nil, count: count)) }

        func set(_ index: Int, _ value: Result<T, Error>) {
            values.withLock { $0[index] = value }
        }

        var all: [Result<T, Error>] {
            values.withLock { $0.map { $0! } }
        }
    }

    /// Runs `operations` at once, each on its own thread, started together; returns their outcomes.
    static func runConcurrently<T: Sendable>(_ operations: [@Sendable () throws -> T]) -> [Result<T, Error>] {
        let results = Results<T>(count: operations.count)
        let start = DispatchSemaphore(value: 0)
        let done = DispatchGroup()
        for (index, operation) in operations.enumerated() {
            done.enter()
            let thread = Thread {
                start.wait()
                results.set(index, Result { try operation() })
                done.leave()
            }
            thread.stackSize = 1 << 20
            thread.start()
        }
        for _ in operations { start.signal() }
        done.wait()
        return results.all
    }

    @Test func fiftyConcurrentMovesInsertsAndDeletes_KeepPositionsAPermutation_AndAccountForEveryOperation() throws {
        let server = try TestServer(workers: 0) { $0.poolSize = 12 }
        defer { server.stop() }
        var generator = SystemRandomNumberGenerator()
        let initial = try server.insertPhotos(20)
        let newcomers = try server.insertPhotos(17)
        let gallery = try server.createGallery("Busy")
        var itemOf: [String: String] = [:]
        for photo in initial { itemOf[photo] = try server.addedItem(gallery: gallery, photo: photo) }
        let itemIDs = itemOf  // fixed from here on: the operations run on other threads

        // 17 inserts of distinct photos (random position or the end), 15 deletes of distinct
        // initial items, 15 moves of random initial items (which may be deleted meanwhile: 101),
        // and 3 inserts of a photo another insert also adds (exactly one of each pair wins, 137).
        var operations: [@Sendable () throws -> Outcome] = []
        for (index, photo) in newcomers.enumerated() {
            let position: Int? = index % 3 == 0 ? nil : Int.random(in: 0...45, using: &generator)
            operations.append {
                let r = try server.addItem(gallery: gallery, photo: photo, position: position)
                if r.status == 201 { return .inserted(photo: photo) }
                return .refused(code: r.json["code"] as? Int ?? -r.status)
            }
        }
        for photo in newcomers.prefix(3) {
            operations.append {
                let r = try server.addItem(gallery: gallery, photo: photo, position: 0)
                if r.status == 201 { return .inserted(photo: photo) }
                return .refused(code: r.json["code"] as? Int ?? -r.status)
            }
        }
        for photo in initial.shuffled(using: &generator).prefix(15) {
            operations.append {
                let r = try server.request("DELETE", "/parse/classes/GalleryItem/\(itemIDs[photo]!)")
                if r.status == 200 { return .removed(photo: photo) }
                return .refused(code: r.json["code"] as? Int ?? -r.status)
            }
        }
        for _ in 0..<15 {
            let photo = initial.randomElement(using: &generator)!
            let position = Int.random(in: 0...40, using: &generator)
            operations.append {
                let r = try server.moveItem(itemIDs[photo]!, to: position)
                if r.status == 200 { return .moved }
                return .refused(code: r.json["code"] as? Int ?? -r.status)
            }
        }
        operations.shuffle(using: &generator)
        #expect(operations.count == 50)

        let outcomes = Self.runConcurrently(operations)

        var expected = Set(initial)
        var inserts: [String: Int] = [:]
        var refusals: [Int: Int] = [:]
        for outcome in outcomes {
            switch outcome {
            case .success(.inserted(let photo)):
                inserts[photo, default: 0] += 1
                expected.insert(photo)
            case .success(.removed(let photo)):
                expected.remove(photo)
            case .success(.moved):
                break
            case .success(.refused(let code)):
                refusals[code, default: 0] += 1
            case .failure(let error):
                Issue.record("request failed: \(error)")
            }
        }
        // Every insert of a new photo succeeded once; each contested one lost exactly once (137);
        // every delete succeeded; only moves of deleted items may have been refused (101).
        #expect(inserts.count == newcomers.count)
        #expect(inserts.values.allSatisfy { $0 == 1 })
        #expect(refusals[137] == 3)
        #expect(Set(refusals.keys).isSubset(of: [101, 137]), "\(refusals)")
        #expect(outcomes.filter { if case .success(.removed) = $0 { return true } else { return false } }.count == 15)

        // The final order: exactly the implied membership, positions exactly 0…n−1.
        let items = try server.items(of: gallery)
        #expect(Set(items.map(\.photo)) == expected)
        #expect(items.count == expected.count)
        #expect(items.map(\.position) == Array(0..<items.count))
        try server.expectConsistent(gallery)
        let galleryObject = try server.gallery(gallery)
        #expect(galleryObject["photoCount"] as? Int == expected.count)
        #expect((galleryObject["coverPhoto"] as? [String: Any])?["objectId"] as? String == items.first?.photo)
    }

    @Test func concurrentPhotoTrashRestoreAndPurge_WithItemChanges_KeepCountsAndPositionsAndNeverDeadlock() throws {
        let server = try TestServer(workers: 0) { $0.poolSize = 12 }
        defer { server.stop() }
        var generator = SystemRandomNumberGenerator()
        // Two galleries sharing photos, so trashing one photo touches both.
        let shared = try server.insertPhotos(12)
        let extra = try server.insertPhotos(8)
        let first = try server.createGallery("First")
        let second = try server.createGallery("Second")
        var itemsInFirst: [String: String] = [:]
        for photo in shared {
            itemsInFirst[photo] = try server.addedItem(gallery: first, photo: photo)
            _ = try server.addedItem(gallery: second, photo: photo, position: 0)
        }
        let firstItems = itemsInFirst  // fixed from here on: the operations run on other threads
        // Some photos start in the trash, to be purged for good meanwhile.
        let doomed = Array(shared.suffix(4))
        for photo in doomed { #expect(try server.request("DELETE", "/parse/classes/Photo/\(photo)").status == 200) }

        var operations: [@Sendable () throws -> Int] = []
        for photo in shared.prefix(6) {
            operations.append { try server.request("DELETE", "/parse/classes/Photo/\(photo)").status }
            operations.append {
                try server.json("PUT", "/parse/classes/Photo/\(photo)", ["deletedAt": ["__op": "Delete"]]).status
            }
        }
        for photo in doomed {
            operations.append { try server.request("DELETE", "/parse/purge/Photo/\(photo)").status }
            operations.append {
                try server.request("DELETE", "/parse/classes/GalleryItem/\(firstItems[photo]!)").status
            }
        }
        for (index, photo) in extra.enumerated() {
            let gallery = index % 2 == 0 ? first : second
            let position = Int.random(in: 0...24, using: &generator)
            operations.append { try server.addItem(gallery: gallery, photo: photo, position: position).status }
        }
        for photo in shared.prefix(8) {
            let position = Int.random(in: 0...24, using: &generator)
            operations.append { try server.moveItem(firstItems[photo]!, to: position).status }
        }
        for photo in shared[6..<8] {
            operations.append {
                try server.request("DELETE", "/parse/classes/GalleryItem/\(firstItems[photo]!)").status
            }
        }
        operations.shuffle(using: &generator)
        for outcome in Self.runConcurrently(operations) {
            switch outcome {
            case .success(let status):
                // 404: an item whose photo was purged meanwhile; never a 5xx (deadlock, constraint).
                #expect(status == 200 || status == 201 || status == 404, "status \(status)")
            case .failure(let error):
                Issue.record("request failed: \(error)")
            }
        }
        for photo in doomed {
            #expect(try server.request("GET", "/parse/classes/Photo/\(photo)").status == 404)
        }
        for gallery in [first, second] {
            try server.expectConsistent(gallery)
            let stored = try server.storedItems(of: gallery).map(\.photo)
            #expect(Set(stored).isDisjoint(with: doomed))
        }
        #expect(
            Set(try server.storedItems(of: second).map(\.photo))
                == Set(shared.prefix(8) + extra.enumerated().filter { $0.offset % 2 == 1 }.map(\.element)))
    }
}
