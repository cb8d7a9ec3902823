import Foundation
import Testing

@testable import GalleryApp

/// A user's find `ETag` moves only with what that user may read (issue #25, item 9): another
/// user's uploads and writes, and galleries not shared with them, leave it as it was (304), so
/// the tag does not show others' activity; their own writes, and writes to galleries shared with
/// them (unsharing included), still change it (200). The master key keeps the class-wide tag.
struct ReaderETagTests {
    private typealias F = ManifestFixtures
    private static let master = ["X-Parse-Master-Key": TestServer.masterKey]

    /// A find's tag, once the change sequences are known and it has settled (`settledETag`). In this
    /// suite no headers means no caller at all: the app id alone, not the test server's master key.
    private func tag(
        _ server: TestServer, _ className: String, _ headers: [String: String], items: [String: String] = [:]
    ) throws -> String {
        try server.settledETag {
            try F.find(server, items, className: className, headers: headers, anonymous: headers.isEmpty)
                .header("ETag")
        }
    }

    /// The status of the find revalidated with `tag`.
    private func revalidate(
        _ server: TestServer, _ className: String, _ headers: [String: String], _ tag: String,
        items: [String: String] = [:]
    ) throws -> Int {
        try F.find(
            server, items, className: className, headers: headers.merging(["If-None-Match": tag]) { $1 },
            anonymous: headers.isEmpty
        ).status
    }

    private func upload(_ server: TestServer, _ user: TestUser, seed: UInt64) throws -> String {
        var headers = user.headers
        headers["Content-Type"] = "image/jpeg"
        let file = try server.request(
            "POST", "/parse/files/p.jpg", body: Data(try TestJPEG.make(width: 40, height: 30, seed: seed)),
            headers: headers)
        let name = try #require(file.json["name"] as? String, "\(file.text)")
        let created = try server.json(
            "POST", "/parse/classes/Photo", ["original": ["__type": "File", "name": name]], headers: user.headers)
        return try #require(created.json["objectId"] as? String, "\(created.text)")
    }

    private func created(_ response: TestServer.Response) throws -> String {
        try #require(response.json["objectId"] as? String, "create failed: \(response.status) \(response.text)")
    }

    @Test func photoTag_IgnoresAnotherUsersUploadsAndWrites_AndMovesWithTheirOwn() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let a = try server.makeUser("alice")
        let b = try server.makeUser("bob")
        let photoA = try upload(server, a, seed: 401)
        let photoB = try upload(server, b, seed: 402)
        let count = ["count": "1", "limit": "0"]
        let tagB = try tag(server, "Photo", b.headers)
        let countB = try tag(server, "Photo", b.headers, items: count)
        let tagA = try tag(server, "Photo", a.headers)
        let tagMaster = try tag(server, "Photo", Self.master)

        _ = try upload(server, a, seed: 403)
        #expect(try revalidate(server, "Photo", a.headers, tagA) == 200, "alice's own upload moves her tag")
        #expect(try revalidate(server, "Photo", Self.master, tagMaster) == 200, "the master key's tag is class-wide")
        #expect(try revalidate(server, "Photo", b.headers, tagB) == 304, "alice's upload does not show in bob's tag")
        #expect(try revalidate(server, "Photo", b.headers, countB, items: count) == 304)
        #expect(
            try server.json("PUT", "/parse/classes/Photo/\(photoA)", ["title": "hers"], headers: a.headers).status
                == 200)
        #expect(try server.request("DELETE", "/parse/classes/Photo/\(photoA)", headers: a.headers).status == 200)
        #expect(try revalidate(server, "Photo", b.headers, tagB) == 304)

        #expect(
            try server.json("PUT", "/parse/classes/Photo/\(photoB)", ["title": "his"], headers: b.headers).status == 200
        )
        #expect(try revalidate(server, "Photo", b.headers, tagB) == 200, "bob's own write moves his tag")
        #expect(try revalidate(server, "Photo", b.headers, countB, items: count) == 200)
    }

    @Test func galleryTags_MoveWithGalleriesTheReaderMayRead_Only() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let a = try server.makeUser("alice")
        let b = try server.makeUser("bob")
        let c = try server.makeUser("carol")
        let photos = [try upload(server, a, seed: 411), try upload(server, a, seed: 412)]
        let shared = try created(
            try server.json(
                "POST", "/parse/classes/Gallery",
                [
                    "name": "Shared", "ACL": [a.objectId: ["read": true, "write": true], b.objectId: ["read": true]],
                ], headers: a.headers))
        let unshared = try created(
            try server.json("POST", "/parse/classes/Gallery", ["name": "Mine"], headers: a.headers))
        let carols = try created(
            try server.json("POST", "/parse/classes/Gallery", ["name": "Carol's"], headers: c.headers))
        let items = ["include": "photo"]
        var galleriesB = try tag(server, "Gallery", b.headers)
        var itemsB = try tag(server, "GalleryItem", b.headers, items: items)
        let galleriesA = try tag(server, "Gallery", a.headers)

        // Writes to galleries bob may not read, their items and photos only in them: not in his tags.
        #expect(
            try server.json("PUT", "/parse/classes/Gallery/\(unshared)", ["name": "Mine, renamed"], headers: a.headers)
                .status == 200)
        #expect(
            try server.json(
                "POST", "/parse/classes/GalleryItem",
                [
                    "gallery": TestServer.pointer("Gallery", unshared), "photo": TestServer.pointer("Photo", photos[1]),
                ], headers: a.headers
            ).status == 201)
        #expect(
            try server.json("PUT", "/parse/classes/Photo/\(photos[1])", ["title": "only in Mine"], headers: a.headers)
                .status == 200)
        #expect(
            try server.json("PUT", "/parse/classes/Gallery/\(carols)", ["name": "Carol's, renamed"], headers: c.headers)
                .status == 200)
        #expect(try revalidate(server, "Gallery", a.headers, galleriesA) == 200, "alice's own gallery moved")
        #expect(try revalidate(server, "Gallery", b.headers, galleriesB) == 304)
        #expect(try revalidate(server, "GalleryItem", b.headers, itemsB, items: items) == 304)

        // An item added to the shared gallery, and a change to its photo: in bob's tags.
        #expect(
            try server.json(
                "POST", "/parse/classes/GalleryItem",
                [
                    "gallery": TestServer.pointer("Gallery", shared), "photo": TestServer.pointer("Photo", photos[0]),
                ], headers: a.headers
            ).status == 201)
        #expect(try revalidate(server, "GalleryItem", b.headers, itemsB, items: items) == 200)
        #expect(try revalidate(server, "Gallery", b.headers, galleriesB) == 200)
        itemsB = try tag(server, "GalleryItem", b.headers, items: items)
        galleriesB = try tag(server, "Gallery", b.headers)
        #expect(
            try server.json(
                "PUT", "/parse/classes/Photo/\(photos[0])", ["title": "shared with bob"], headers: a.headers
            ).status == 200)
        #expect(try revalidate(server, "GalleryItem", b.headers, itemsB, items: items) == 200)

        // Unsharing reaches the reader who lost access.
        #expect(
            try server.json(
                "PUT", "/parse/classes/Gallery/\(shared)",
                [
                    "ACL": [a.objectId: ["read": true, "write": true]]
                ], headers: a.headers
            ).status == 200)
        #expect(try revalidate(server, "Gallery", b.headers, galleriesB) == 200)
        galleriesB = try tag(server, "Gallery", b.headers)

        // A public gallery is read by every user; bob's own gallery is his.
        #expect(
            try server.json(
                "POST", "/parse/classes/Gallery", ["name": "Public", "ACL": ["*": ["read": true]]], headers: c.headers
            ).status == 201)
        #expect(try revalidate(server, "Gallery", b.headers, galleriesB) == 200)
        galleriesB = try tag(server, "Gallery", b.headers)
        #expect(try server.json("POST", "/parse/classes/Gallery", ["name": "Bob's"], headers: b.headers).status == 201)
        #expect(try revalidate(server, "Gallery", b.headers, galleriesB) == 200)
    }
}

extension ReaderETagTests {
    @Test func anonymousTag_MovesWithPublicGalleriesOnly_NotWithUsersPrivateWrites() throws {
        let server = try TestServer(workers: 0) { $0.publicRead = true }
        defer { server.stop() }
        let a = try server.makeUser("alice")
        let photo = try upload(server, a, seed: 421)
        let anonymousGalleries = try tag(server, "Gallery", [:])
        let anonymousItems = try tag(server, "GalleryItem", [:])
        let anonymousPhotos = try tag(server, "Photo", [:])

        // A private upload, edit and gallery: nothing a caller without a session reads.
        _ = try upload(server, a, seed: 422)
        #expect(
            try server.json("PUT", "/parse/classes/Photo/\(photo)", ["title": "private"], headers: a.headers).status
                == 200)
        let mine = try created(try server.json("POST", "/parse/classes/Gallery", ["name": "Mine"], headers: a.headers))
        #expect(
            try server.json(
                "POST", "/parse/classes/GalleryItem",
                [
                    "gallery": TestServer.pointer("Gallery", mine), "photo": TestServer.pointer("Photo", photo),
                ], headers: a.headers
            ).status == 201)
        #expect(try revalidate(server, "Gallery", [:], anonymousGalleries) == 304)
        #expect(try revalidate(server, "GalleryItem", [:], anonymousItems) == 304)
        #expect(try revalidate(server, "Photo", [:], anonymousPhotos) == 304)

        // Published: the public's tags move.
        #expect(
            try server.json(
                "PUT", "/parse/classes/Gallery/\(mine)",
                [
                    "ACL": [a.objectId: ["read": true, "write": true], "*": ["read": true]]
                ], headers: a.headers
            ).status == 200)
        #expect(try revalidate(server, "Gallery", [:], anonymousGalleries) == 200)
        #expect(try revalidate(server, "GalleryItem", [:], anonymousItems) == 200)
        // And a new account changes what a caller without a session may read (before the first, everything).
        let photosAfter = try tag(server, "Photo", [:])
        _ = try server.makeUser("bob")
        var moved = false
        for _ in 0..<100 where !moved {
            moved = try revalidate(server, "Photo", [:], photosAfter) == 200
            if !moved { Thread.sleep(forTimeInterval: 0.05) }
        }
        #expect(moved)
    }
}
