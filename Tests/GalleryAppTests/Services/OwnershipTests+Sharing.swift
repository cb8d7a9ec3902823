import Foundation
import Testing

@testable import GalleryApp

/// Sharing: a gallery's ACL lets others read it (and its items and photos) through itself only, a write
/// ACL edits but neither trashes nor reshares, the trash stays its owner's, public_read shows only what is public.
extension OwnershipTests {
    @Test func sharedGallery_IsReadableThroughItselfOnly() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let a = try server.makeUser("alice")
        let b = try server.makeUser("bob")
        let photos = try server.insertPhotos(2, owner: a.objectId)
        let shared = try gallery(server, "Shared", acl: [b.objectId: ["read": true]], a)
        let other = try gallery(server, "Other", a)
        _ = try createdId(try item(server, gallery: shared, photo: photos[0], a))
        _ = try createdId(try item(server, gallery: other, photo: photos[1], a))

        let got = try server.request("GET", "/parse/classes/Gallery/\(shared)?include=coverPhoto", headers: b.headers)
        #expect(got.status == 200)
        #expect((got.json["ACL"] as? [String: Any])?[b.objectId] as? [String: Bool] == ["read": true])
        #expect((got.json["coverPhoto"] as? [String: Any])?["objectId"] as? String == photos[0])
        #expect(F.ids(try F.find(server, [:], className: "Gallery", headers: b.headers)) == [shared])
        #expect(F.code(try server.request("GET", "/parse/classes/Gallery/\(other)", headers: b.headers)) == 101)

        let items = try F.find(
            server, ["where": F.json(["gallery": TestServer.pointer("Gallery", shared)]), "include": "photo"],
            className: "GalleryItem", headers: b.headers)
        let included = F.results(items).first?["photo"] as? [String: Any]
        #expect(included?["objectId"] as? String == photos[0])
        // The bucket URL of a photo seen through the gallery is the photo's (the bucket serves it as it serves any).
        #expect((included?["original"] as? [String: Any])?["url"] as? String != nil)
        #expect(F.ids(try F.find(server, [:], className: "GalleryItem", headers: b.headers)).count == 1)
        #expect(try count(server, "GalleryItem", b.headers) == 1)
        #expect(try count(server, "Gallery", b.headers) == 1)
        // Through the Photo class B sees none of A's photos.
        #expect(F.ids(try F.find(server, [:], headers: b.headers)).isEmpty)
        #expect(F.code(try server.request("GET", "/parse/classes/Photo/\(photos[0])", headers: b.headers)) == 101)
        // Reading is not writing.
        #expect(
            F.code(try server.json("PUT", "/parse/classes/Gallery/\(shared)", ["name": "Bob's"], headers: b.headers))
                == 101)
        // Unsharing takes it away.
        #expect(
            try server.json(
                "PUT", "/parse/classes/Gallery/\(shared)", ["ACL": [:] as [String: Any]], headers: a.headers
            ).status == 200)
        #expect(F.code(try server.request("GET", "/parse/classes/Gallery/\(shared)", headers: b.headers)) == 101)
        // "*" read: every user (and, with public_read, every caller) reads it.
        let c = try server.makeUser("carol")
        #expect(
            try server.json(
                "PUT", "/parse/classes/Gallery/\(shared)", ["ACL": ["*": ["read": true]]], headers: a.headers
            ).status == 200)
        #expect(try server.request("GET", "/parse/classes/Gallery/\(shared)", headers: c.headers).status == 200)
        #expect(F.ids(try F.find(server, [:], className: "Gallery", headers: c.headers)) == [shared])
    }

    @Test func writeACL_EditsItemsAndName_ButNeitherTrashesNorReshares() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let a = try server.makeUser("alice")
        let b = try server.makeUser("bob")
        let c = try server.makeUser("carol")
        let photosA = try server.insertPhotos(2, owner: a.objectId)
        let photosB = try server.insertPhotos(1, owner: b.objectId)
        let shared = try gallery(
            server, "Family", acl: [b.objectId: ["read": true, "write": true], c.objectId: ["read": true]], a)
        let itemA = try createdId(try item(server, gallery: shared, photo: photosA[0], a))

        // B adds B's photo, moves it, renames the gallery, removes A's item.
        let itemB = try createdId(try item(server, gallery: shared, photo: photosB[0], b))
        #expect(
            try server.json("PUT", "/parse/classes/GalleryItem/\(itemB)", ["position": 0], headers: b.headers).status
                == 200)
        #expect(
            try server.json("PUT", "/parse/classes/Gallery/\(shared)", ["name": "Family 2026"], headers: b.headers)
                .status == 200)
        #expect(try server.storedItems(of: shared).map(\.photo) == [photosB[0], photosA[0]])
        #expect(try server.request("DELETE", "/parse/classes/GalleryItem/\(itemA)", headers: b.headers).status == 200)
        // The item B added is B's.
        let bItem = try server.request("GET", "/parse/classes/GalleryItem/\(itemB)", headers: a.headers)
        #expect((bItem.json["owner"] as? [String: Any])?["objectId"] as? String == b.objectId)

        // B may not: add a photo B does not own, trash A's photos, trash or restore or purge the
        // gallery, change its ACL.
        #expect(F.code(try item(server, gallery: shared, photo: photosA[1], b)) == 101)
        #expect(F.code(try server.request("DELETE", "/parse/classes/Photo/\(photosA[0])", headers: b.headers)) == 101)
        #expect(F.code(try server.request("DELETE", "/parse/classes/Gallery/\(shared)", headers: b.headers)) == 101)
        let reshare = try server.json(
            "PUT", "/parse/classes/Gallery/\(shared)", ["ACL": ["*": ["read": true]]], headers: b.headers)
        #expect(F.code(reshare) == 101)
        // C reads but may not add, move or remove.
        let photosC = try server.insertPhotos(1, owner: c.objectId)
        #expect(F.code(try item(server, gallery: shared, photo: photosC[0], c)) == 101)
        #expect(
            F.code(try server.json("PUT", "/parse/classes/GalleryItem/\(itemB)", ["position": 1], headers: c.headers))
                == 101)
        #expect(F.code(try server.request("DELETE", "/parse/classes/GalleryItem/\(itemB)", headers: c.headers)) == 101)
        #expect(F.ids(try F.find(server, [:], className: "GalleryItem", headers: c.headers)) == [itemB])
        // The owner trashes, restores and purges.
        #expect(try server.request("DELETE", "/parse/classes/Gallery/\(shared)", headers: a.headers).status == 200)
        #expect(
            F.code(
                try server.json(
                    "PUT", "/parse/classes/Gallery/\(shared)", ["deletedAt": ["__op": "Delete"]], headers: b.headers))
                == 101)
        #expect(F.code(try server.request("DELETE", "/parse/purge/Gallery/\(shared)", headers: b.headers)) == 101)
        #expect(try server.request("DELETE", "/parse/purge/Gallery/\(shared)", headers: a.headers).status == 200)
        #expect(
            try server.request("GET", "/parse/classes/Photo/\(photosB[0])", headers: b.headers).status == 200,
            "B's photo stays B's")
    }

    /// The trash is its owner's: a reader of a shared (or, with `public_read`, public) gallery
    /// never gets a trashed photo through an item, nor the trashed gallery, by a get by id, an
    /// `include` or a `where` on `deletedAt` (issue #25, item 9).
    @Test func trash_IsItsOwnersAlone_ThroughGetIncludeAndDeletedAtQueries() throws {
        let server = try TestServer(workers: 0) { $0.publicRead = true }
        defer { server.stop() }
        let a = try server.makeUser("alice")
        let b = try server.makeUser("bob")
        let photos = try server.insertPhotos(2, owner: a.objectId)
        let shared = try gallery(server, "Shared", acl: [b.objectId: ["read": true], "*": ["read": true]], a)
        let trashedItem = try createdId(try item(server, gallery: shared, photo: photos[0], a))
        let liveItem = try createdId(try item(server, gallery: shared, photo: photos[1], a))
        #expect(try server.request("DELETE", "/parse/classes/Photo/\(photos[0])", headers: a.headers).status == 200)

        func get(_ path: String, _ headers: [String: String]?) throws -> TestServer.Response {
            try server.request("GET", "/parse/classes/" + path, headers: headers ?? [:], anonymous: headers == nil)
        }
        for (who, headers) in [("B", b.headers), ("no session", nil)] {
            let viaItem = try get("GalleryItem/\(trashedItem)?include=photo", headers)
            #expect(viaItem.status == 404 && F.code(viaItem) == 101, "\(who): \(viaItem.text)")
            let live = try get("GalleryItem/\(liveItem)?include=photo", headers)
            #expect((live.json["photo"] as? [String: Any])?["original"] != nil, "\(who): \(live.text)")
        }
        // The owner (and the master key) still see it, to restore it.
        let own = try get("GalleryItem/\(trashedItem)?include=photo", a.headers)
        #expect((own.json["photo"] as? [String: Any])?["deletedAt"] != nil, "\(own.text)")
        #expect(try get("GalleryItem/\(trashedItem)?include=photo", Self.master).status == 200)

        // A trashed gallery: its owner's Recently Deleted, no one else's.
        #expect(try server.request("DELETE", "/parse/classes/Gallery/\(shared)", headers: a.headers).status == 200)
        let inTrash = ["where": F.json(["deletedAt": ["$exists": true]])]
        for (who, headers) in [("B", b.headers), ("no session", nil)] {
            let r = try get("Gallery/\(shared)", headers)
            #expect(r.status == 404 && F.code(r) == 101, "\(who): \(r.text)")
            let found = try F.find(
                server, inTrash, className: "Gallery", headers: headers ?? [:], anonymous: headers == nil)
            #expect(found.status == 200 && F.results(found).isEmpty, "\(who): \(found.text)")
        }
        #expect(try get("Gallery/\(shared)", a.headers).json["deletedAt"] != nil)
        #expect(F.ids(try F.find(server, inTrash, className: "Gallery", headers: a.headers)) == [shared])
    }

    @Test func acl_IsValidated_AndOnlyTheMasterKeyGivesObjectsAway() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let a = try server.makeUser("alice")
        let b = try server.makeUser("bob")
        let role = try create(server, "Gallery", ["name": "x", "ACL": ["role:Admins": ["read": true]]], a)
        #expect(role.status == 201, "\(role.text)")
        for acl: Any in [
            "public", ["*": true], ["*": ["read": "yes"]], ["*": ["delete": true]], ["not an id!": ["read": true]],
            ["role:Bad!": ["read": true]], ["role:": ["read": true]],
        ] {
            let r = try create(server, "Gallery", ["name": "x", "ACL": acl], a)
            #expect(r.status == 400 && F.code(r) == 123, "\(acl): \(r.text)")
        }
        // owner: a user may name only themself; the master key anyone (but a user).
        let forB = try create(server, "Gallery", ["name": "x", "owner": TestServer.pointer("_User", b.objectId)], a)
        #expect(F.code(forB) == 119)
        let given = try createdId(
            try server.json(
                "POST", "/parse/classes/Gallery", ["name": "Gift", "owner": TestServer.pointer("_User", b.objectId)],
                headers: Self.master))
        #expect(try server.request("GET", "/parse/classes/Gallery/\(given)", headers: b.headers).status == 200)
        let nobody = try server.json(
            "POST", "/parse/classes/Gallery", ["name": "x", "owner": TestServer.pointer("_User", "NoSuchUser")],
            headers: Self.master)
        #expect(F.code(nobody) == 106)
        // owner never changes; sending it back unchanged (an SDK's save) is fine.
        let mine = try gallery(server, "Mine", a)
        #expect(
            try server.json(
                "PUT", "/parse/classes/Gallery/\(mine)", ["owner": TestServer.pointer("_User", a.objectId)],
                headers: a.headers
            ).status == 200)
        #expect(
            F.code(
                try server.json(
                    "PUT", "/parse/classes/Gallery/\(mine)", ["owner": TestServer.pointer("_User", b.objectId)],
                    headers: a.headers)) == 105)
        // Queries on owner work (the master key's view of one user).
        let bs = try F.find(
            server, ["where": F.json(["owner": TestServer.pointer("_User", b.objectId)])], className: "Gallery",
            headers: Self.master)
        #expect(F.ids(bs) == [given])
    }

    @Test func publicRead_ShowsPublicGalleriesTheirItemsAndPhotos_Only() throws {
        let server = try TestServer(workers: 0) { $0.publicRead = true }
        defer { server.stop() }
        let a = try server.makeUser("alice")
        let photos = try server.insertPhotos(2, owner: a.objectId)
        let publicGallery = try gallery(server, "Public", acl: ["*": ["read": true]], a)
        let privateGallery = try gallery(server, "Private", a)
        _ = try createdId(try item(server, gallery: publicGallery, photo: photos[0], a))
        _ = try createdId(try item(server, gallery: privateGallery, photo: photos[1], a))

        #expect(F.ids(try F.find(server, [:], className: "Gallery", anonymous: true)) == [publicGallery])
        #expect(try count(server, "Gallery", [:], anonymous: true) == 1)
        #expect(try server.request("GET", "/parse/classes/Gallery/\(publicGallery)", anonymous: true).status == 200)
        #expect(F.code(try server.request("GET", "/parse/classes/Gallery/\(privateGallery)", anonymous: true)) == 101)
        let items = try F.find(server, ["include": "photo"], className: "GalleryItem", anonymous: true)
        #expect(F.results(items).compactMap { ($0["photo"] as? [String: Any])?["objectId"] as? String } == [photos[0]])
        #expect(F.ids(try F.find(server, anonymous: true)).isEmpty, "photos only through the gallery")
        #expect(try count(server, "Photo", [:], anonymous: true) == 0)
        #expect(
            F.code(try server.json("PUT", "/parse/classes/Gallery/\(publicGallery)", ["name": "x"], anonymous: true))
                == 101)
        #expect(F.code(try server.json("POST", "/parse/classes/Gallery", ["name": "x"], anonymous: true)) == 119)
    }
}
