import Foundation
import HTTPServer
import Testing

@testable import GalleryApp

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What the SDKs send to write: `/batch` with `transaction`, a fetched object saved back whole, and
/// the array operations on tags.
extension ParseSDKTests {
    // MARK: 3. transaction in /batch

    @Test func batch_AcceptsTransactionFalse_AndRunsTransactionTrueAllOrNothing() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let photos = try server.insertPhotos(2)
        // saveAll(): "transaction": false, as every ParseSwift batch sends it.
        let plain = try server.json(
            "POST", "/parse/batch",
            [
                "requests": [
                    ["method": "PUT", "path": "/parse/classes/Photo/\(photos[0])", "body": ["title": "one"]],
                    ["method": "PUT", "path": "/parse/classes/Photo/\(photos[1])", "body": ["title": "two"]],
                ], "transaction": false,
            ])
        #expect(plain.status == 200, "\(plain.text)")
        #expect((plain.jsonArray as? [[String: Any]])?.allSatisfy { $0["success"] != nil } == true)
        // saveAll(transaction: true) with every request fine: all applied.
        let good = try server.json(
            "POST", "/parse/batch",
            [
                "requests": [
                    ["method": "PUT", "path": "/parse/classes/Photo/\(photos[0])", "body": ["title": "uno"]],
                    ["method": "POST", "path": "/parse/classes/Gallery", "body": ["name": "Kept"]],
                ], "transaction": true,
            ])
        #expect(good.status == 200, "\(good.text)")
        #expect((good.jsonArray as? [[String: Any]])?.count == 2)
        #expect(try server.request("GET", "/parse/classes/Photo/\(photos[0])").json["title"] as? String == "uno")
        // One failing request: nothing is kept, and the answer is that request's Parse error.
        let bad = try server.json(
            "POST", "/parse/batch",
            [
                "requests": [
                    ["method": "PUT", "path": "/parse/classes/Photo/\(photos[0])", "body": ["title": "lost"]],
                    ["method": "POST", "path": "/parse/classes/Gallery", "body": ["name": "Lost"]],
                    ["method": "PUT", "path": "/parse/classes/Photo/\(photos[1])", "body": ["width": 1]],
                ], "transaction": true,
            ])
        #expect(bad.status == 400, "\(bad.text)")
        #expect(F.code(bad) == 105, "\(bad.text)")
        #expect(try server.request("GET", "/parse/classes/Photo/\(photos[0])").json["title"] as? String == "uno")
        let galleries = try server.application.pool.query("select name from galleries order by name").map {
            try $0.decode(String.self, 0)
        }
        #expect(galleries == ["Kept"])
        // deleteAll(transaction: true) of an object that does not exist: 101, the others stay.
        let missing = try server.json(
            "POST", "/parse/batch",
            [
                "requests": [
                    ["method": "DELETE", "path": "/parse/classes/Photo/\(photos[0])"],
                    ["method": "DELETE", "path": "/parse/classes/Photo/zzzzzzzzzz"],
                ], "transaction": true,
            ])
        #expect(missing.status == 404 && F.code(missing) == 101, "\(missing.text)")
        #expect(try server.request("GET", "/parse/classes/Photo/\(photos[0])").json["deletedAt"] == nil)
        // DELETE in a transactional batch only trashes, as the route does (idempotent): rolled back
        // with a failing batch, the photo stays live; a trashed photo deleted again stays in the
        // trash with its original (deleting for good is DELETE /purge/..., never a batch path).
        let jpeg = try TestJPEG.make(width: 40, height: 30, seed: 77)
        let uploaded = try server.uploadPhoto(jpeg, name: "kept.jpg")
        let original = try server.application.pool.query(
            "select original_key from photos where object_id = $1", [uploaded]
        )
        .first!.decode(String.self, 0)
        let failing = try server.json(
            "POST", "/parse/batch",
            [
                "requests": [
                    ["method": "DELETE", "path": "/parse/classes/Photo/\(uploaded)"],
                    ["method": "PUT", "path": "/parse/classes/Photo/\(photos[1])", "body": ["width": 1]],
                ], "transaction": true,
            ])
        #expect(F.code(failing) == 105, "\(failing.text)")
        #expect(
            try server.scalar(
                "select count(*)::bigint from photos where object_id = $1 and deleted_at is null", [uploaded]) == 1)
        #expect(try server.request("DELETE", "/parse/classes/Photo/\(uploaded)").status == 200)  // to the trash
        let again = try server.json(
            "POST", "/parse/batch",
            [
                "requests": [
                    ["method": "DELETE", "path": "/parse/classes/Photo/\(uploaded)"]
                ], "transaction": true,
            ])
        #expect(again.status == 200, "\(again.text)")
        #expect(
            try server.scalar(
                "select count(*)::bigint from photos where object_id = $1 and deleted_at is not null", [uploaded]) == 1)
        #expect(try server.request("GET", "/bucket/" + original).status == 200)
        // The pool is whole again afterwards: every connection came back (a timer's statement, such
        // as the request-id cleanup, may hold one for a moment).
        var inUse = server.application.pool.stats.inUse
        for _ in 0..<100 where inUse != 0 {
            Thread.sleep(forTimeInterval: 0.02)
            inUse = server.application.pool.stats.inUse
        }
        #expect(inUse == 0)
        // Still strict: a non-boolean transaction, or another unknown member.
        let notBool = try server.json("POST", "/parse/batch", ["requests": [[String: Any]](), "transaction": "yes"])
        #expect(notBool.status == 400 && F.code(notBool) == 107, "\(notBool.text)")
        let unknown = try server.json("POST", "/parse/batch", ["requests": [[String: Any]](), "atomic": true])
        #expect(unknown.status == 400 && F.code(unknown) == 105, "\(unknown.text)")
    }

    // MARK: 4. Saving a fetched object

    /// What ParseSwift's `save()` sends for an object it fetched: every field it holds but
    /// objectId, createdAt and updatedAt.
    private func savedBack(_ fetched: [String: Any], _ changes: [String: Any]) -> [String: Any] {
        var body = fetched
        for key in ["objectId", "createdAt", "updatedAt"] { body[key] = nil }
        for (key, value) in changes { body[key] = value }
        return body
    }

    @Test func save_OfAFetchedPhoto_SendsServerFieldsBack_AndSucceeds() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        // takenAt with microseconds: the client holds milliseconds, and that counts as unchanged.
        try F.insert(
            server,
            [
                F.Row(
                    id: "aaaaaaaaa1", createdAt: Date(), title: "before", tags: ["x"],
                    takenAt: Date(timeIntervalSince1970: 1_600_000_000.123456))
            ])
        let path = "/parse/classes/Photo/aaaaaaaaa1"
        let fetched = try server.request("GET", path).json
        #expect(fetched["aspectRatio"] != nil && fetched["original"] != nil && fetched["takenAt"] != nil)
        let saved = try server.json("PUT", path, savedBack(fetched, ["title": "after"]))
        #expect(saved.status == 200, "\(saved.text)")
        #expect(try server.request("GET", path).json["title"] as? String == "after")
        // Sent back with nothing changed at all: a no-op that answers updatedAt.
        let again = try server.json("PUT", path, savedBack(try server.request("GET", path).json, [:]))
        #expect(again.status == 200, "\(again.text)")
        // A real change to a server-owned field is still 105, and nothing is written.
        for change: [String: Any] in [
            ["aspectRatio": 2.5], ["byteSize": 1], ["status": "failed"], ["width": NSNull()],
            ["original": ["__type": "File", "name": "other.jpg", "url": "http://x/other.jpg"]],
            ["takenAt": F.date(Date(timeIntervalSince1970: 1_600_000_001))],
        ] {
            let r = try server.json("PUT", path, savedBack(fetched, change.merging(["title": "changed"]) { a, _ in a }))
            #expect(r.status == 400 && F.code(r) == 105, "\(change): \(r.text)")
        }
        #expect(try server.request("GET", path).json["title"] as? String == "after")
        // A wrongly typed server field is no value it can hold: 105 as before; an operation on it too.
        #expect(F.code(try server.json("PUT", path, ["width": "400"])) == 105)
        #expect(F.code(try server.json("PUT", path, ["width": ["__op": "Increment", "amount": 1]])) == 105)
    }

    @Test func save_OfAFetchedGalleryAndItem_SendsServerFieldsBack_AndSucceeds() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let photos = try server.insertPhotos(2)
        let gallery = try server.createGallery("Trip")
        let item = try server.addedItem(gallery: gallery, photo: photos[0])
        _ = try server.addedItem(gallery: gallery, photo: photos[1])
        let galleryPath = "/parse/classes/Gallery/\(gallery)"
        let fetchedGallery = try server.request("GET", galleryPath).json
        #expect(fetchedGallery["photoCount"] as? Int == 2 && fetchedGallery["coverPhoto"] != nil)
        let renamed = try server.json("PUT", galleryPath, savedBack(fetchedGallery, ["name": "Trip 2024"]))
        #expect(renamed.status == 200, "\(renamed.text)")
        #expect(try server.gallery(gallery)["name"] as? String == "Trip 2024")
        for change: [String: Any] in [["photoCount": 5], ["coverPhoto": TestServer.pointer("Photo", photos[1])]] {
            let r = try server.json("PUT", galleryPath, savedBack(fetchedGallery, change))
            #expect(r.status == 400 && F.code(r) == 105, "\(change): \(r.text)")
        }
        // The item: its gallery and photo pointers come back with the new position.
        let itemPath = "/parse/classes/GalleryItem/\(item)"
        let fetchedItem = try server.request("GET", itemPath).json
        let moved = try server.json("PUT", itemPath, savedBack(fetchedItem, ["position": 1]))
        #expect(moved.status == 200, "\(moved.text)")
        #expect(try server.photoOrder(of: gallery) == [photos[1], photos[0]])
        let repointed = try server.json(
            "PUT", itemPath,
            savedBack(
                fetchedItem,
                [
                    "position": 0, "photo": TestServer.pointer("Photo", photos[1]),
                ]))
        #expect(repointed.status == 400 && F.code(repointed) == 105, "\(repointed.text)")
        #expect(try server.photoOrder(of: gallery) == [photos[1], photos[0]])
    }

    // MARK: 5. Array operations on tags

    @Test func tags_AddAddUniqueAndRemove_AreAtomic() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        try F.insert(server, [F.Row(id: "aaaaaaaaa1", createdAt: Date(), tags: ["a"])])
        let path = "/parse/classes/Photo/aaaaaaaaa1"
        func tags() throws -> [String] { try server.request("GET", path).json["tags"] as? [String] ?? [] }
        #expect(try server.json("PUT", path, ["tags": ["__op": "AddUnique", "objects": ["a", "b"]]]).status == 200)
        #expect(try tags() == ["a", "b"])
        #expect(try server.json("PUT", path, ["tags": ["__op": "Add", "objects": ["c", "a"]]]).status == 200)
        #expect(try tags() == ["a", "b", "c"])
        #expect(try server.json("PUT", path, ["tags": ["__op": "Remove", "objects": ["a", "zz"]]]).status == 200)
        #expect(try tags() == ["b", "c"])
        // The search column follows.
        let found = try get(
            server, "/parse/classes/Photo", [("where", #"{"tags":{"$text":{"$search":{"$term":"c"}}}}"#)])
        #expect(F.ids(found) == ["aaaaaaaaa1"], "\(found.text)")
        // Two clients adding at once both land.
        let adders = 8
        DispatchQueue.concurrentPerform(iterations: adders) { index in
            _ = try? server.json("PUT", path, ["tags": ["__op": "AddUnique", "objects": ["t\(index)"]]])
        }
        #expect(Set(try tags()) == Set(["b", "c"] + (0..<adders).map { "t\($0)" }))
        // On create, Add sets the array.
        let created = try server.json("POST", "/parse/classes/Photo", ["tags": ["__op": "Add", "objects": ["x"]]])
        #expect(F.code(created) == 142)  // original is still required: the operation itself parsed
        // What is really wrong stays an error: unknown operation, wrong objects, over the limit.
        #expect(F.code(try server.json("PUT", path, ["tags": ["__op": "Increment", "amount": 1]])) == 111)
        #expect(F.code(try server.json("PUT", path, ["tags": ["__op": "Add", "objects": [1]]])) == 111)
        #expect(F.code(try server.json("PUT", path, ["tags": ["__op": "Add", "objects": "a"]])) == 107)
        #expect(F.code(try server.json("PUT", path, ["title": ["__op": "Add", "objects": ["a"]]])) == 111)
        let many = (0..<95).map { "m\($0)" }
        let over = try server.json("PUT", path, ["tags": ["__op": "AddUnique", "objects": many]])
        #expect(over.status == 400 && F.code(over) == 142, "\(over.text)")
        #expect(try tags().count == 2 + adders)
    }
}
