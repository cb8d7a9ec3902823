import Foundation
import Testing

@testable import GalleryApp

/// LiveQuery on a view (issue 27 item 5): a subscription names the view's fields, receives
/// Photo's events under the view's names, exactly for the photos its caller may read, while the
/// view's `find` permission lets it.
@Suite struct PhotoViewLiveQueryTests {
    static let resource = ViewDefinition(
        className: "Resource", source: "Photo",
        fields: [
            .init(name: "filename", path: "filename"), .init(name: "thumbnailURLString", path: "thumbnail.url"),
            .init(name: "caption", path: "title"),
        ])

    @Test func endToEnd_EventsUnderTheViewsNames_ForWhatTheSubscriberMayRead() throws {
        let server = try TestServer(workers: 0, listening: true) { $0.views = [Self.resource] }
        defer { server.stop() }
        #expect(server.application.liveQuery.waitUntilListening(timeout: 10))
        let alice = try server.makeUser("alice")
        let bruno = try server.makeUser("bruno")
        let brunoPhoto = try server.insertPhotos(1, owner: bruno.objectId)[0]
        let jpegPath = NSTemporaryDirectory() + "live-view-\(UUID().uuidString).jpg"
        try Data(try TestJPEG.make(width: 160, height: 120, seed: 7)).write(to: URL(fileURLWithPath: jpegPath))
        defer { try? FileManager.default.removeItem(atPath: jpegPath) }
        let run = try runLiveQueryScript(
            "live_query_view_e2e.py",
            [
                server.baseURL, TestServer.appID, TestServer.masterKey, jpegPath, alice.token, alice.objectId,
                bruno.token, bruno.objectId, brunoPhoto, server.application.configuration.databaseURL,
            ])
        #expect(run.status == 0 && run.output.contains("\"ok\": true"), "\(run.output)")
    }

    @Test func selection_WritesTheViewsNamesFromAPhotoObject() throws {
        let view = PhotoView(Self.resource, permissions: PhotoView.defaultPermissions)
        let (photoWhere, selection) = try view.live(
            where: ["caption": ["$regex": "^sea"]], keys: ["caption", "thumbnailURLString"], limits: ParseLimits())
        #expect((photoWhere["title"] as? [String: Any])?["$regex"] as? String == "^sea" && photoWhere["caption"] == nil)
        #expect(selection.photoKeys == ["objectId", "createdAt", "updatedAt", "title", "thumbnail"])
        let object = selection.object(from: [
            "className": "Photo", "objectId": "p1", "title": "sea", "filename": "a.jpg",
            "thumbnail": ["__type": "File", "name": "thumbnails/p1.jpg", "url": "http://h/b/thumbnails/p1.jpg"],
        ])
        #expect(object["className"] as? String == "Resource" && object["caption"] as? String == "sea")
        #expect(object["thumbnailURLString"] as? String == "http://h/b/thumbnails/p1.jpg" && object["filename"] == nil)
        #expect(object["objectId"] as? String == "p1" && object["title"] == nil && object["thumbnail"] == nil)
        // Photo's own names, and names the view lacks, are 102 as for a find.
        for bad: [String: Any] in [["title": "sea"], ["nope": 1]] {
            #expect(throws: ParseError.self) { _ = try view.live(where: bad, keys: nil, limits: ParseLimits()) }
        }
        #expect(throws: ParseError.self) { _ = try view.live(where: [:], keys: ["title"], limits: ParseLimits()) }
    }
}
