import Foundation
import Postgres
import Testing

@testable import GalleryApp

/// Find and count answers carry an `ETag` from the classes' change sequences (migration 0010,
/// `ClassChangeSequences`), and `If-None-Match` with the current tag is answered 304 without a query.
/// Requests go over a raw socket, so no client cache answers or rewrites them.
@Suite struct ConditionalManifestTests {
    /// A find over a raw socket: `path` under /parse/classes, `If-None-Match` when given; with the
    /// master key, or the app id alone when `anonymous`.
    static func find(
        _ server: TestServer, _ path: String, ifNoneMatch: String? = nil, anonymous: Bool = false
    ) throws -> RawHTTP.Response {
        var head = "GET /parse/classes/\(path) HTTP/1.1\r\nHost: localhost\r\nX-Parse-Application-Id: gallery\r\n"
        if !anonymous { head += "X-Parse-Master-Key: \(TestServer.masterKey)\r\n" }
        if let ifNoneMatch { head += "If-None-Match: \(ifNoneMatch)\r\n" }
        return try RawHTTP.exchange(port: server.application.port, head: head + "Connection: close\r\n\r\n")
    }

    /// Waits until the server's sequences are known (its listener has connected and read them).
    static func waitUntilKnown(_ server: TestServer, timeout: Double = 15) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while !server.application.classChanges.isKnown && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        return server.application.classChanges.isKnown
    }

    /// The current tag of `path`, after checking it is stable: a 200 carrying it, then a 304 for it.
    static func currentTag(
        _ server: TestServer, _ path: String, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> String {
        let first = try find(server, path)
        #expect(first.status == 200, "\(path): \(first.status) \(first.text)", sourceLocation: sourceLocation)
        let tag = try #require(first.header("ETag"), "\(path) has no ETag", sourceLocation: sourceLocation)
        let again = try find(server, path, ifNoneMatch: tag)
        #expect(again.status == 304, "\(path) unchanged but \(again.status)", sourceLocation: sourceLocation)
        #expect(again.header("ETag") == tag, sourceLocation: sourceLocation)
        return tag
    }

    /// Expects `path` with `If-None-Match: old` to be a 200 with another tag: at once (a change made
    /// through this server), or within a few seconds (one whose notification has to arrive).
    /// Returns the new tag.
    @discardableResult
    static func expectChanged(
        _ server: TestServer, _ path: String, from old: String, _ step: String, immediately: Bool,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> String {
        let deadline = Date().addingTimeInterval(immediately ? 0 : 10)
        var response = try find(server, path, ifNoneMatch: old)
        while response.status == 304 && Date() < deadline {
            Thread.sleep(forTimeInterval: 0.02)
            response = try find(server, path, ifNoneMatch: old)
        }
        #expect(response.status == 200, "\(step): \(path) still \(response.status)", sourceLocation: sourceLocation)
        let tag = response.header("ETag")
        #expect(tag != nil && tag != old, "\(step): \(path) tag \(tag ?? "none")", sourceLocation: sourceLocation)
        // A change may send several notifications (items and their galleries' photoCount): once
        // the first has shown, catch up with the rest before taking the new tag.
        if !immediately { try server.application.classChanges.refresh() }
        return try currentTag(server, path, sourceLocation: sourceLocation)
    }

    @Test func find_Answers304WithoutBody_WhileTheClassIsUnchanged() throws {
        let server = try TestServer(workers: 0, listening: true)
        defer { server.stop() }
        _ = try server.insertPhotos(3)
        #expect(Self.waitUntilKnown(server))
        // The rows above were inserted behind the server's back: read the sequences now, rather
        // than race their notifications (as a write through the API does).
        try server.application.classChanges.refresh()
        for path in [
            "Photo", "Photo?order=-createdAt&limit=2", "Photo?count=1&limit=0", "Gallery?count=1", "GalleryItem",
        ] {
            let first = try Self.find(server, path)
            #expect(first.status == 200)
            #expect(first.header("Cache-Control") == "private, no-cache")
            let tag = try #require(first.header("ETag"))
            #expect(tag.hasPrefix("W/\""))
            let revalidated = try Self.find(server, path, ifNoneMatch: tag)
            #expect(revalidated.status == 304, "\(path): \(revalidated.status)")
            #expect(revalidated.body.isEmpty)
            #expect(revalidated.header("ETag") == tag)
            #expect(revalidated.header("Cache-Control") == "private, no-cache")
            // Weak and strong forms, lists, `*` (RFC 9110 §13.1.2).
            let strong = String(tag.dropFirst(2))
            for field in [strong, "\"other\", " + tag, "W/\"other\",\(strong)", "*"] {
                #expect(try Self.find(server, path, ifNoneMatch: field).status == 304, "\(path) with \(field)")
            }
            for field in ["\"other\"", "W/\"other\", \"more\""] {
                let response = try Self.find(server, path, ifNoneMatch: field)
                #expect(response.status == 200 && response.header("ETag") == tag, "\(path) with \(field)")
            }
        }
        // A bad query is its error, whatever the client sends to revalidate.
        let bad = try Self.find(server, "Photo?where=%7B%22nope%22%3A1%7D", ifNoneMatch: "*")
        #expect(bad.status == 400 && bad.text.contains("\"code\":102"), "\(bad.status) \(bad.text)")
    }

    @Test func find_TagsDiffer_ForQueriesAndKeys_AndMethodOverrideRevalidates() throws {
        let server = try TestServer(workers: 0, listening: true)
        defer { server.stop() }
        _ = try server.insertPhotos(3)
        #expect(Self.waitUntilKnown(server))
        // The rows above were inserted behind the server's back: read the sequences now, rather
        // than race their notifications (as a write through the API does).
        try server.application.classChanges.refresh()
        let page = try Self.currentTag(server, "Photo?limit=2&order=-createdAt")
        #expect(try Self.currentTag(server, "Photo?order=-createdAt&limit=2") == page, "parameter order is normalized")
        let others = [
            try Self.currentTag(server, "Photo?limit=1&order=-createdAt"),
            try Self.currentTag(server, "Photo?limit=2&order=createdAt"),
            try Self.currentTag(server, "Photo?limit=2&order=-createdAt&count=1"),
            try Self.currentTag(server, "Gallery?limit=2&order=-createdAt"),
        ]
        #expect(Set(others + [page]).count == others.count + 1)
        // Another access level: another tag, and the client's tag does not revalidate it.
        let anonymous = try Self.find(server, "Photo?limit=2&order=-createdAt", ifNoneMatch: page, anonymous: true)
        #expect(anonymous.status == 200)
        #expect(anonymous.header("ETag") != nil && anonymous.header("ETag") != page)

        // POST with _method GET (the SDKs' long queries): the same tag and 304, still never stored.
        func post(_ ifNoneMatch: String?) throws -> RawHTTP.Response {
            let body = Array(#"{"_method":"GET","limit":2,"order":"-createdAt"}"#.utf8)
            var head = "POST /parse/classes/Photo HTTP/1.1\r\nHost: localhost\r\nX-Parse-Application-Id: gallery\r\n"
            head += "X-Parse-Master-Key: \(TestServer.masterKey)\r\n"
            head += "Content-Type: application/json\r\nContent-Length: \(body.count)\r\nConnection: close\r\n"
            if let ifNoneMatch { head += "If-None-Match: \(ifNoneMatch)\r\n" }
            return try RawHTTP.exchange(port: server.application.port, head: head + "\r\n", body: body)
        }
        let posted = try post(nil)
        #expect(posted.status == 200 && posted.header("ETag") == page)
        #expect(posted.header("Cache-Control") == "no-store")
        let revalidated = try post(page)
        #expect(revalidated.status == 304 && revalidated.header("Cache-Control") == "no-store")
    }

    @Test func find_AnswersNewTag_AfterEachKindOfChangeThroughTheAPI() throws {
        let server = try TestServer(workers: 0, listening: true)
        defer { server.stop() }
        #expect(Self.waitUntilKnown(server))
        // The worker runs when the test says so, so the photo is pending when its creation is checked.
        let worker = server.application.makeWorkerPool(threads: 1)
        let photos = "Photo?order=-createdAt&count=1"
        let galleries = "Gallery?count=1"
        let items = "GalleryItem?order=position"
        var photoTag = try Self.currentTag(server, photos)
        var galleryTag = try Self.currentTag(server, galleries)
        var itemTag = try Self.currentTag(server, items)

        // Upload: the photo is created (pending) at once, and becomes ready when the worker is done.
        let photo = try server.uploadPhoto(try TestJPEG.make(width: 64, height: 48), title: "a")
        photoTag = try Self.expectChanged(server, photos, from: photoTag, "create", immediately: true)
        #expect(worker.drain() == 1)
        #expect(try server.waitForProcessing(photo, timeout: 1) == "ready")
        photoTag = try Self.expectChanged(server, photos, from: photoTag, "derivatives ready", immediately: false)

        #expect(try server.json("PUT", "/parse/classes/Photo/\(photo)", ["title": "b"]).status == 200)
        photoTag = try Self.expectChanged(server, photos, from: photoTag, "title edited", immediately: true)

        let gallery = try server.createGallery("G")
        galleryTag = try Self.expectChanged(server, galleries, from: galleryTag, "gallery created", immediately: true)
        let other = try server.uploadPhoto(try TestJPEG.make(width: 48, height: 64, seed: 2))
        photoTag = try Self.expectChanged(server, photos, from: photoTag, "second photo", immediately: true)
        let first = try server.addedItem(gallery: gallery, photo: photo)
        _ = try server.addedItem(gallery: gallery, photo: other)
        itemTag = try Self.expectChanged(server, items, from: itemTag, "items added", immediately: true)
        galleryTag = try Self.expectChanged(
            server, galleries, from: galleryTag, "items added (cover, count)", immediately: true)
        #expect(try server.moveItem(first, to: 1).status == 200)
        itemTag = try Self.expectChanged(server, items, from: itemTag, "item moved", immediately: true)
        galleryTag = try Self.expectChanged(
            server, galleries, from: galleryTag, "item moved (cover)", immediately: true)

        // Trash and restore a photo: its page, and the gallery's count and items.
        #expect(try server.request("DELETE", "/parse/classes/Photo/\(other)").status == 200)
        photoTag = try Self.expectChanged(server, photos, from: photoTag, "photo trashed", immediately: true)
        galleryTag = try Self.expectChanged(server, galleries, from: galleryTag, "photo trashed", immediately: true)
        itemTag = try Self.expectChanged(server, items, from: itemTag, "photo trashed", immediately: true)
        // Deleting it again changes nothing: the tag still revalidates.
        #expect(try server.request("DELETE", "/parse/classes/Photo/\(other)").status == 200)
        #expect(try Self.find(server, photos, ifNoneMatch: photoTag).status == 304)
        #expect(
            try server.json("PUT", "/parse/classes/Photo/\(other)", ["deletedAt": ["__op": "Delete"]]).status == 200)
        photoTag = try Self.expectChanged(server, photos, from: photoTag, "photo restored", immediately: true)
        itemTag = try Self.expectChanged(server, items, from: itemTag, "photo restored", immediately: true)

        #expect(try server.request("DELETE", "/parse/classes/GalleryItem/\(first)").status == 200)
        itemTag = try Self.expectChanged(server, items, from: itemTag, "item removed", immediately: true)
        #expect(try server.request("DELETE", "/parse/classes/Gallery/\(gallery)").status == 200)
        galleryTag = try Self.expectChanged(server, galleries, from: galleryTag, "gallery trashed", immediately: true)

        // Purged for good.
        #expect(try server.request("DELETE", "/parse/classes/Photo/\(photo)").status == 200)
        photoTag = try Self.expectChanged(server, photos, from: photoTag, "trashed before purge", immediately: true)
        #expect(try server.request("DELETE", "/parse/purge/Photo/\(photo)").status == 200)
        photoTag = try Self.expectChanged(server, photos, from: photoTag, "photo purged", immediately: true)
        _ = (galleryTag, itemTag)
    }

    @Test func find_AnswersNewTag_AfterChangesMadeInSQLByAnotherConnection() throws {
        let server = try TestServer(workers: 0, listening: true)
        defer { server.stop() }
        #expect(Self.waitUntilKnown(server))
        // Another instance's writes: a session of its own on the same database.
        let other = try PostgresConnection(url: server.application.configuration.databaseURL)
        let photos = "Photo?order=-createdAt&count=1"
        let galleries = "Gallery"
        let items = "GalleryItem"
        var photoTag = try Self.currentTag(server, photos)
        var galleryTag = try Self.currentTag(server, galleries)
        var itemTag = try Self.currentTag(server, items)
        let insertPhoto = """
            insert into photos (object_id, filename, byte_size, checksum, width, height, aspect_ratio, original_key)
            values ($1, 'x.jpg', 1, $1, 4, 3, 1.33, 'originals/x.jpg')
            """
        let photoSteps: [(String, String, [PostgresBindable?])] = [
            ("insert", insertPhoto, ["sqlphoto01"]),
            ("insert, second", insertPhoto, ["sqlphoto02"]),
            ("title", "update photos set title = 'new' where object_id = $1", ["sqlphoto01"]),
            (
                "derivatives ready",
                "update photos set status = 'ready', thumbnail_key = 'thumbnails/a.jpg', thumbnail_width = 4, thumbnail_height = 3 where object_id = $1",
                ["sqlphoto01"]
            ),
            ("trash", "update photos set deleted_at = now() where object_id = $1", ["sqlphoto02"]),
            ("restore", "update photos set deleted_at = null where object_id = $1", ["sqlphoto02"]),
            ("delete", "delete from photos where object_id = $1", ["sqlphoto02"]),
        ]
        for (step, sql, binds) in photoSteps {
            try other.query(sql, binds)
            photoTag = try Self.expectChanged(server, photos, from: photoTag, step, immediately: false)
        }
        try other.query("insert into galleries (object_id, name) values ('sqlgallery', 'G')")
        galleryTag = try Self.expectChanged(server, galleries, from: galleryTag, "gallery insert", immediately: false)
        try other.query(
            "insert into photos (object_id, filename, byte_size, checksum, width, height, aspect_ratio, original_key) values ('sqlphoto03', 'y.jpg', 1, 'c3', 4, 3, 1.33, 'originals/y.jpg')"
        )
        photoTag = try Self.expectChanged(server, photos, from: photoTag, "third photo", immediately: false)
        try other.query(
            "insert into gallery_items (object_id, gallery_id, photo_id, position) values ('sqlitem001', 'sqlgallery', 'sqlphoto01', 0), ('sqlitem002', 'sqlgallery', 'sqlphoto03', 1)"
        )
        itemTag = try Self.expectChanged(server, items, from: itemTag, "items insert", immediately: false)
        try other.query("update gallery_items set position = 1 - position where gallery_id = 'sqlgallery'")
        itemTag = try Self.expectChanged(server, items, from: itemTag, "items moved", immediately: false)
        // A photo's change alone changes the answers that read photos: items (hidden when trashed), galleries (cover).
        try other.query("update photos set deleted_at = now() where object_id = 'sqlphoto01'")
        galleryTag = try Self.expectChanged(
            server, galleries, from: galleryTag, "cover photo trashed", immediately: false)
        itemTag = try Self.expectChanged(server, items, from: itemTag, "item's photo trashed", immediately: false)
        try other.query("update galleries set name = 'H' where object_id = 'sqlgallery'")
        galleryTag = try Self.expectChanged(server, galleries, from: galleryTag, "gallery renamed", immediately: false)
        try other.query("delete from galleries where object_id = 'sqlgallery'")
        itemTag = try Self.expectChanged(
            server, items, from: itemTag, "items deleted with their gallery", immediately: false)
        _ = (photoTag, galleryTag)
    }

    @Test func sequences_MoveOncePerTransaction_AtCommit_SoWritersNeverWaitOnThem() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let ids = try server.insertPhotos(2)
        let url = server.application.configuration.databaseURL
        let (first, second, reader) = (
            try PostgresConnection(url: url), try PostgresConnection(url: url), try PostgresConnection(url: url)
        )
        func seq(_ className: String) throws -> Int64 {
            try reader.query("select seq from class_change_sequences where class_name = $1", [className]).first!.decode(
                Int64.self, 0)
        }
        let before = try seq("Photo")
        try first.execute("begin")
        try first.query("update photos set title = 'one' where object_id = $1", [ids[0]])
        try first.query("update photos set title = 'two' where object_id = $1", [ids[0]])
        #expect(try seq("Photo") == before, "an uncommitted change is not announced")
        // Another writer of the class is not held up by the open transaction.
        try second.execute("set statement_timeout = '5s'")
        try second.query("update photos set title = 'other' where object_id = $1", [ids[1]])
        #expect(try seq("Photo") == before + 1)
        try first.execute("commit")
        #expect(try seq("Photo") == before + 2, "one bump for the transaction's two statements")
        #expect(try seq("Gallery") == 0 && seq("GalleryItem") == 0)
        #expect(try reader.query("select count(*)::bigint from class_change_pending").first!.decode(Int64.self, 0) == 0)
        // A rolled-back change moves nothing.
        try first.execute("begin")
        try first.query("delete from photos where object_id = $1", [ids[1]])
        try first.execute("rollback")
        #expect(try seq("Photo") == before + 2)
    }

    @Test func find_Never304_WhileTheListenerIsDisconnected() throws {
        let server = try TestServer(workers: 0, listening: true)
        defer { server.stop() }
        _ = try server.insertPhotos(2)
        #expect(Self.waitUntilKnown(server))
        // The rows above were inserted behind the server's back: read the sequences now, rather
        // than race their notifications (as a write through the API does).
        try server.application.classChanges.refresh()
        let path = "Photo?order=-createdAt&count=1"
        let tag = try Self.currentTag(server, path)
        // Keep a session for writing, then take the listener's session away and keep it from
        // reconnecting (the pool's open connections go on serving).
        let other = try PostgresConnection(url: server.application.configuration.databaseURL)
        let admin = try PostgresConnection(url: server.adminURL)
        try admin.execute("alter database \(server.databaseName) allow_connections false")
        defer { try? admin.execute("alter database \(server.databaseName) allow_connections true") }
        let killed = try admin.query(
            "select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and query like $2",
            [server.databaseName, "LISTEN \"\(ClassChangeSequences.channel)\"%"])
        #expect(killed.count == 1, "the listener's session was not found")
        let deadline = Date().addingTimeInterval(10)
        while server.application.classChanges.isKnown && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        #expect(!server.application.classChanges.isKnown)

        // Unknown sequences: the page is served, without a tag, and never as a 304.
        let down = try Self.find(server, path, ifNoneMatch: tag)
        #expect(down.status == 200, "\(down.status) while the listener is down")
        #expect(down.header("ETag") == nil)
        // A change no notification reaches this server with.
        try other.query("update photos set title = 'changed while down'")
        #expect(try Self.find(server, path, ifNoneMatch: tag).status == 200)

        // Back: the listener reconnects and re-reads, so the old tag is not revalidated.
        try admin.execute("alter database \(server.databaseName) allow_connections true")
        #expect(Self.waitUntilKnown(server, timeout: 20))
        let back = try Self.find(server, path, ifNoneMatch: tag)
        #expect(back.status == 200)
        let newTag = try #require(back.header("ETag"))
        #expect(newTag != tag)
        #expect(try Self.find(server, path, ifNoneMatch: newTag).status == 304)
    }
}
