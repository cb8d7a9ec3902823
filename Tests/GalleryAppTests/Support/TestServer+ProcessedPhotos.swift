import Testing

@testable import GalleryApp

extension TestServer {
    /// A server (no workers running) holding `jpegs` as photos that one worker pool has processed,
    /// each `ready`, with their objectIds in order: where the backfill suites start, before they
    /// undo part of the worker's work for their background pass to redo. The server is stopped if
    /// an upload fails; otherwise stopping it is the caller's.
    static func withProcessedPhotos(_ jpegs: [[UInt8]]) throws -> (server: TestServer, photos: [String]) {
        let server = try TestServer(workers: 0)
        do {
            let photos = try jpegs.map { try server.uploadPhoto($0) }
            server.application.makeWorkerPool(threads: 1).drain()
            for id in photos { #expect(try server.waitForProcessing(id, timeout: 10) == "ready") }
            return (server, photos)
        } catch {
            server.stop()
            throw error
        }
    }
}
