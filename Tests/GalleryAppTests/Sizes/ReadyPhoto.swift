import Foundation
import Testing

@testable import GalleryApp

/// A photo uploaded to a test server and processed (`ready`), with its display sizes as
/// `SizeService` names and serves them: where each display-size suite starts.
struct ReadyPhoto {
    let server: TestServer
    let id: String

    /// Uploads a `width`×`height` test JPEG made from `seed` and waits for its processing.
    init(on server: TestServer, width: Int, height: Int, seed: UInt64) throws {
        self.server = server
        id = try server.uploadPhoto(TestJPEG.make(width: width, height: height, seed: seed))
        #expect(try server.waitForProcessing(id) == "ready")
    }

    /// The server's size service.
    var sizes: SizeService { server.application.sizes! }

    /// The photo as the size service reads it now.
    func record() throws -> SizedPhoto {
        let found = try sizes.repository.photo(id)
        return try #require(found)
    }

    /// The path of `size`'s URL as the service gives it (the server's host and port stripped).
    func path(_ size: DisplaySize) throws -> String {
        let rendition = try #require(sizes.rendition(photo: record(), size: size))
        return try #require(URL(string: rendition.url)).path
    }

    /// `size` fetched through its URL.
    func fetch(_ size: DisplaySize) throws -> TestServer.Response { try get(path(size)) }

    /// `GET path` as a browser asks for an image: no application id.
    func get(_ path: String, headers: [String: String] = [:]) throws -> TestServer.Response {
        try server.request("GET", path, headers: headers, appID: nil)
    }
}
