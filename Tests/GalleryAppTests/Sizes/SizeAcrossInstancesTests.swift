import Foundation
import GalleryTestSupport
import Imaging
import Testing

@testable import GalleryApp

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Two galleryd instances on one database and one store: cold requests for one size, split
/// between them, make one render in all (the advisory lock of `SizeRepository.whileHoldingRenderLock`).
@Suite(.serialized) final class SizeAcrossInstancesTests {
    @Test func twoInstances_ColdRequestsForOneSize_RenderItOnce() throws {
        // Listening: cold requests go to both instances over HTTP at once.
        let server = try TestServer(workers: 1, listening: true)
        defer { server.stop() }
        let id = try ReadyPhoto(on: server, width: 1600, height: 1200, seed: 61).id
        // A second instance: the same database and storage directory, its own port, no workers.
        try server.withSecondInstance(label: "galleryd.test.second", configure: { $0.workers = 0 }) { second in
            let bases = [server.baseURL, "http://127.0.0.1:\(second.port)"]
            let statuses = Locked<[Int]>([])
            let bodies = Locked<Set<Data>>([])
            DispatchQueue.concurrentPerform(iterations: 100) { index in
                let url = URL(string: bases[index % 2] + "/bucket/sizes/\(id)/z.jpg")!
                let response = try? TestServer.send(URLRequest(url: url))
                statuses.withValue { $0.append(response?.status ?? -1) }
                if let body = response?.body { bodies.withValue { _ = $0.insert(body) } }
            }
            #expect(statuses.current == Array(repeating: 200, count: 100))
            #expect(bodies.current.count == 1, "every answer is the same file")
            let renders = [server.application.sizes!, second.sizes!].map { $0.metrics.renders.value("z") }
            #expect(renders.reduce(0, +) == 1, "renders per instance: \(renders)")
            let listed = try server.application.pool.query(
                "select count(*)::bigint as n from photo_sizes where photo_id = $1 and size = 'z'", [id])
            #expect(try listed[0].decode(Int64.self, "n") == 1)
        }
    }
}
