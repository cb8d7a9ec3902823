import Foundation
import Testing

@testable import GalleryApp

/// One photo through the Parse API: fetch, change, Recently Deleted, purge and batch.
@Suite struct ManifestObjectTests {
    typealias F = ManifestFixtures
    static var isoDate: Regex<Substring> { #/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/# }

    /// The path under the server of an absolute asset URL that starts with `publicURL`.
    static func localPath(_ url: String, publicURL: String) -> String? {
        guard url.hasPrefix(publicURL + "/") else { return nil }
        return String(url.dropFirst(publicURL.count))
    }

    @Test func object_HasAbsoluteFileURLs_DisplayedSizesAndParseDates() throws {
        let publicURL = "https://photos.example.com"
        let server = try TestServer(workers: 1) { $0.publicURL = publicURL + "/" }
        defer { server.stop() }
        // 160×120 stored with EXIF orientation 6: displayed as 120×160.
        let jpeg = TestJPEG.withOrientation(try TestJPEG.make(width: 160, height: 120, seed: 11), 6)
        let id = try server.uploadPhoto(jpeg, name: "rotated.jpg", title: "Rotated", tags: ["test"])
        #expect(try server.waitForProcessing(id) == "ready")
        let r = try server.request("GET", "/parse/classes/Photo/\(id)")
        #expect(r.status == 200)
        let photo = r.json
        #expect(photo["objectId"] as? String == id)
        #expect((photo["createdAt"] as? String)?.wholeMatch(of: Self.isoDate) != nil)
        #expect((photo["updatedAt"] as? String)?.wholeMatch(of: Self.isoDate) != nil)
        #expect(photo["filename"] as? String == "rotated.jpg")
        #expect(photo["title"] as? String == "Rotated")
        #expect(photo["tags"] as? [String] == ["test"])
        #expect(photo["status"] as? String == "ready")
        #expect(photo["width"] as? Int == 120 && photo["height"] as? Int == 160)
        #expect(abs((photo["aspectRatio"] as? Double ?? 0) - 0.75) < 0.001)
        #expect((photo["dominantColor"] as? String)?.wholeMatch(of: #/#[0-9a-fA-F]{6}/#) != nil)
        #expect(photo["deletedAt"] == nil)
        #expect(photo["byteSize"] as? Int == jpeg.count)
        // Never enlarged: both derivatives are the displayed size here.
        #expect(photo["thumbnailWidth"] as? Int == 120 && photo["thumbnailHeight"] as? Int == 160)
        #expect(photo["previewWidth"] as? Int == 120 && photo["previewHeight"] as? Int == 160)
        for name in ["original", "thumbnail", "preview"] {
            let file = try #require(photo[name] as? [String: Any], "\(name)")
            #expect(file["__type"] as? String == "File")
            let url = try #require(file["url"] as? String)
            #expect(url.hasPrefix(publicURL + "/bucket/"), "\(url)")
            #expect((file["name"] as? String).map { url.hasSuffix("/" + $0) } == true)
            // The URL names a real asset of this server.
            let asset = try server.request("GET", try #require(Self.localPath(url, publicURL: publicURL)), appID: nil)
            #expect(asset.status == 200, "\(url)")
            #expect(asset.header("Content-Type") == "image/jpeg")
        }
        // The same object in the manifest, and the same fields.
        let listed = F.results(try F.find(server, ["where": F.json(["objectId": id])]))
        #expect(listed.count == 1)
        #expect(F.json(listed[0]) == F.json(photo))
        // Missing, malformed or unknown ids are 101 / 404.
        for missing in ["zzzzzzzzzz", "short", "has%20space", String(repeating: "x", count: 300)] {
            let miss = try server.request("GET", "/parse/classes/Photo/\(missing)")
            #expect(miss.status == 404, "\(missing)")
            #expect(F.code(miss) == 101, "\(missing)")
        }
        let bogus = try server.request("GET", "/parse/classes/Photo/\(id)?where=%7B%7D")
        #expect(bogus.status == 400 && F.code(bogus) == 102)
    }

    @Test func put_ChangesTitleAndTags_AndRefusesReadOnlyFields() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        try F.insert(
            server, [F.Row(id: "aaaaaaaaaa", createdAt: Date(timeIntervalSince1970: 1_700_000_000), title: "Old")])
        let before = try server.request("GET", "/parse/classes/Photo/aaaaaaaaaa").json
        let put = try server.json(
            "PUT", "/parse/classes/Photo/aaaaaaaaaa", ["title": "New title", "tags": ["x", "y"]])
        #expect(put.status == 200)
        let updatedAt = try #require(put.json["updatedAt"] as? String)
        #expect(updatedAt.wholeMatch(of: Self.isoDate) != nil)
        #expect(Set(put.json.keys) == ["updatedAt"])
        let after = try server.request("GET", "/parse/classes/Photo/aaaaaaaaaa").json
        #expect(after["title"] as? String == "New title")
        #expect(after["tags"] as? [String] == ["x", "y"])
        #expect(after["updatedAt"] as? String == updatedAt)
        #expect(after["updatedAt"] as? String != before["updatedAt"] as? String)
        // Stored at the millisecond shown, so a client can query by the value it was given.
        let byUpdatedAt = try F.find(server, ["where": F.json(["updatedAt": ["__type": "Date", "iso": updatedAt]])])
        #expect(F.ids(byUpdatedAt) == ["aaaaaaaaaa"])
        // The new title is searchable at once.
        let search = try F.find(server, ["where": F.json(["title": ["$text": ["$search": ["$term": "new"]]]])])
        #expect(F.ids(search) == ["aaaaaaaaaa"])
        // Read-only fields with another value, unknown and mistyped fields change nothing (a
        // read-only field sent with its current value is a no-op: ParseSDKTests).
        let refused: [(Any, Int)] = [
            (["width": 10], 105), (["status": "failed"], 105), (["objectId": "bbbbbbbbbb"], 105),
            (["createdAt": ["__type": "Date", "iso": "2020-01-01T00:00:00.000Z"]], 105),
            (["original": ["__type": "File", "name": "x.jpg"]], 105), (["no pe": 1], 105),
            (["title": 5], 111), (["tags": "x"], 111), (["tags": [1]], 111),
        ]
        for (body, code) in refused {
            let r = try server.json("PUT", "/parse/classes/Photo/aaaaaaaaaa", body)
            #expect(r.status == 400, "\(body): \(r.text)")
            #expect(F.code(r) == code, "\(body): \(r.text)")
        }
        #expect(F.json(try server.request("GET", "/parse/classes/Photo/aaaaaaaaaa").json) == F.json(after))
        let missing = try server.json("PUT", "/parse/classes/Photo/zzzzzzzzzz", ["title": "x"])
        #expect(missing.status == 404 && F.code(missing) == 101)
        let notJSON = try server.request("PUT", "/parse/classes/Photo/aaaaaaaaaa", body: Data("title=x".utf8))
        #expect(notJSON.status == 400)
    }

    @Test func delete_MovesToRecentlyDeleted_RestoreBringsBack_RetriedDeleteKeepsIt_PurgeRemovesBlobs() throws {
        let server = try TestServer(workers: 1)
        defer { server.stop() }
        let id = try server.uploadPhoto(try TestJPEG.make(width: 96, height: 64, seed: 21), name: "gone.jpg")
        let other = try server.uploadPhoto(try TestJPEG.make(width: 64, height: 96, seed: 22), name: "stays.jpg")
        #expect(try server.waitForProcessing(id) == "ready")
        #expect(try server.waitForProcessing(other) == "ready")
        let photo = try server.request("GET", "/parse/classes/Photo/\(id)").json
        let keys = try ["original", "thumbnail", "preview"].map { name -> String in
            let url = try #require((photo[name] as? [String: Any])?["url"] as? String)
            return String(url[try #require(url.range(of: "/bucket/")).upperBound...])
        }
        for key in keys { #expect(FileManager.default.fileExists(atPath: server.storage + "/" + key), "\(key)") }

        // DELETE on a live photo: trashed.
        let trash = try server.request("DELETE", "/parse/classes/Photo/\(id)")
        #expect(trash.status == 200 && trash.text == "{}")
        #expect(F.ids(try F.find(server)) == [other])
        #expect(try F.find(server, ["count": "1", "limit": "0"]).json["count"] as? Int == 1)
        let listed = try F.find(server, ["where": F.json(["deletedAt": ["$exists": true]])])
        #expect(F.ids(listed) == [id])
        let deletedAt = try #require((F.results(listed).first?["deletedAt"] as? [String: Any])?["iso"] as? String)
        #expect(deletedAt.wholeMatch(of: Self.isoDate) != nil)
        #expect(
            F.ids(try F.find(server, ["where": F.json(["deletedAt": ["__type": "Date", "iso": deletedAt]])])) == [id])
        #expect(F.ids(try F.find(server, ["where": F.json(["deletedAt": NSNull()])])) == [other])
        #expect(try server.request("GET", "/parse/classes/Photo/\(id)").status == 200)  // still fetchable
        let edit = try server.json("PUT", "/parse/classes/Photo/\(id)", ["title": "x"])
        #expect(edit.status == 400 && F.code(edit) == 119)
        for key in keys { #expect(FileManager.default.fileExists(atPath: server.storage + "/" + key)) }

        // PUT deletedAt Delete: restored.
        let restore = try server.json("PUT", "/parse/classes/Photo/\(id)", ["deletedAt": ["__op": "Delete"]])
        #expect(restore.status == 200, "\(restore.text)")
        #expect(Set(F.ids(try F.find(server))) == [id, other])
        #expect(try F.find(server, ["count": "1", "limit": "0"]).json["count"] as? Int == 2)
        #expect(try server.request("GET", "/parse/classes/Photo/\(id)").json["deletedAt"] == nil)

        // DELETE is idempotent: the second (a client's or proxy's retry) leaves it in the trash.
        #expect(try server.request("DELETE", "/parse/classes/Photo/\(id)").status == 200)
        let retried = try server.request("DELETE", "/parse/classes/Photo/\(id)")
        #expect(retried.status == 200 && retried.text == "{}")
        #expect(try server.request("GET", "/parse/classes/Photo/\(id)").status == 200)
        for key in keys { #expect(FileManager.default.fileExists(atPath: server.storage + "/" + key), "\(key)") }

        // DELETE /purge/Photo/<id>: gone with its blobs; the other photo keeps its own.
        let remove = try server.request("DELETE", "/parse/purge/Photo/\(id)")
        #expect(remove.status == 200 && remove.text == "{}")
        let gone = try server.request("GET", "/parse/classes/Photo/\(id)")
        #expect(gone.status == 404 && F.code(gone) == 101)
        for key in keys {
            #expect(!FileManager.default.fileExists(atPath: server.storage + "/" + key), "\(key)")
            #expect(try server.request("GET", "/bucket/" + key, appID: nil).status == 404)
        }
        #expect(try server.application.pool.query("select 1 from files where key = $1", [keys[0]]).count == 0)
        let again = try server.request("DELETE", "/parse/classes/Photo/\(id)")
        #expect(again.status == 404 && F.code(again) == 101)
        let purgedAgain = try server.request("DELETE", "/parse/purge/Photo/\(id)")
        #expect(purgedAgain.status == 404 && F.code(purgedAgain) == 101)
        let otherPhoto = try server.request("GET", "/parse/classes/Photo/\(other)").json
        let otherURL = try #require((otherPhoto["thumbnail"] as? [String: Any])?["url"] as? String)
        #expect(
            try server.request("GET", String(otherURL[otherURL.range(of: "/bucket/")!.lowerBound...]), appID: nil)
                .status == 200)
        #expect(try F.find(server, ["count": "1", "limit": "0"]).json["count"] as? Int == 1)
    }

    @Test func purge_NeedsTheMasterKey_AndEmptiesOnlyTheTrash() throws {
        let server = try TestServer(workers: 1)
        defer { server.stop() }
        let trashed = try server.uploadPhoto(try TestJPEG.make(width: 64, height: 64, seed: 31), name: "a.jpg")
        let live = try server.uploadPhoto(try TestJPEG.make(width: 64, height: 64, seed: 32), name: "b.jpg")
        #expect(try server.waitForProcessing(trashed) == "ready")
        #expect(try server.waitForProcessing(live) == "ready")
        try F.insert(server, [F.Row(id: "tttttttttt", createdAt: Date(), deletedAt: Date())])
        let originalURL = try #require(
            (try server.request("GET", "/parse/classes/Photo/\(trashed)").json["original"] as? [String: Any])?["url"]
                as? String)
        let originalPath = String(originalURL[originalURL.range(of: "/bucket/")!.lowerBound...])
        #expect(try server.request("DELETE", "/parse/classes/Photo/\(trashed)").status == 200)

        let noKey = try server.request("DELETE", "/parse/purge/Photo", anonymous: true)
        #expect(noKey.status == 403 && noKey.json["error"] as? String == "unauthorized")
        let wrongKey = try server.request(
            "DELETE", "/parse/purge/Photo", headers: ["X-Parse-Master-Key": "not-the-master-key-at-all"])
        #expect(wrongKey.status == 403)
        #expect(try server.request("GET", "/parse/classes/Photo/\(trashed)").status == 200)

        let purge = try server.request(
            "DELETE", "/parse/purge/Photo", headers: ["X-Parse-Master-Key": TestServer.masterKey])
        #expect(purge.status == 200, "\(purge.text)")
        #expect(try server.request("GET", "/parse/classes/Photo/\(trashed)").status == 404)
        #expect(try server.request("GET", "/parse/classes/Photo/tttttttttt").status == 404)
        #expect(try server.request("GET", originalPath, appID: nil).status == 404)
        #expect(F.ids(try F.find(server)) == [live])
        #expect(
            try F.find(server, ["count": "1", "limit": "0", "where": F.json(["deletedAt": ["$exists": true]])]).json[
                "count"] as? Int == 0)
        #expect(
            try server.application.pool.query("select n from row_counts where name = 'photos_trashed'").first!.decode(
                Int64.self, 0) == 0)
        let unknown = try server.request(
            "DELETE", "/parse/purge/Nope", headers: ["X-Parse-Master-Key": TestServer.masterKey])
        #expect(unknown.status == 400 && F.code(unknown) == 103)
    }

    @Test func purge_RemovesALargeTrash_AndRetentionKeepsRecentOnes() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let total = 1234
        try F.insertMany(server, count: total)
        let pool = server.application.pool
        try pool.query("update photos set deleted_at = now() - interval '40 days' where object_id <= 'p000000600'")
        try pool.query(
            "update photos set deleted_at = now() - interval '1 day' where object_id > 'p000000600' and object_id <= 'p000001200'"
        )
        func counter(_ name: String) throws -> Int64 {
            try pool.query("select n from row_counts where name = $1", [name]).first!.decode(Int64.self, 0)
        }
        // Retention: only photos trashed before the cutoff go.
        let purged = try server.application.trash.purge(olderThanDays: 30)
        #expect(purged.photos == 600)
        #expect(try F.tableCount(server) == Int64(total - 600))
        #expect(try counter("photos_trashed") == 600)
        // Everything in the trash, more than two batches' worth.
        let r = try server.request(
            "DELETE", "/parse/purge/Photo", headers: ["X-Parse-Master-Key": TestServer.masterKey])
        #expect(r.status == 200)
        #expect(try F.tableCount(server) == Int64(total - 1200))
        #expect(try counter("photos_trashed") == 0)
        #expect(try counter("photos_live") == Int64(total - 1200))
        #expect(try F.find(server, ["count": "1", "limit": "0"]).json["count"] as? Int == total - 1200)
        #expect(try server.application.trash.deletePhotos(["p000001201"]).isEmpty)  // live: left alone
    }

    @Test func batch_AnswersEachRequest_AndAFailureDoesNotStopTheOthers() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let t = Date(timeIntervalSince1970: 1_700_000_000)
        try F.insert(
            server,
            [F.Row(id: "aaaaaaaaaa", createdAt: t), F.Row(id: "bbbbbbbbbb", createdAt: t.addingTimeInterval(1))])
        let r = try server.json(
            "POST", "/parse/batch",
            [
                "requests": [
                    ["method": "PUT", "path": "/parse/classes/Photo/aaaaaaaaaa", "body": ["title": "Batched"]],
                    ["method": "PUT", "path": "/parse/classes/Photo/zzzzzzzzzz", "body": ["title": "Nobody"]],
                    ["method": "PUT", "path": "/parse/classes/Photo/aaaaaaaaaa", "body": ["width": 1]],
                    ["method": "DELETE", "path": "/parse/classes/Photo/bbbbbbbbbb"],
                    ["method": "GET", "path": "/parse/classes/Photo/aaaaaaaaaa"],
                    ["method": "GET", "path": "/classes/Photo/aaaaaaaaaa"],  // without the mount prefix
                ]
            ])
        #expect(r.status == 200, "\(r.text)")
        let answers = try #require(r.jsonArray as? [[String: Any]])
        #expect(answers.count == 6)
        #expect((answers[0]["success"] as? [String: Any])?["updatedAt"] as? String != nil)
        #expect((answers[1]["error"] as? [String: Any])?["code"] as? Int == 101)
        #expect((answers[2]["error"] as? [String: Any])?["code"] as? Int == 105)
        #expect((answers[3]["success"] as? [String: Any])?.isEmpty == true)
        #expect((answers[4]["success"] as? [String: Any])?["title"] as? String == "Batched")
        #expect((answers[5]["success"] as? [String: Any])?["objectId"] as? String == "aaaaaaaaaa")
        #expect(F.ids(try F.find(server)) == ["aaaaaaaaaa"])
        // A malformed batch is refused as a whole.
        let notArray = try server.json("POST", "/parse/batch", ["requests": "x"])
        #expect(notArray.status == 400)
        let tooMany = try server.json(
            "POST", "/parse/batch",
            [
                "requests": Array(
                    repeating: ["method": "GET", "path": "/parse/classes/Photo/aaaaaaaaaa"], count: 51)
            ])
        #expect(tooMany.status == 400)
        let noKey = try server.request("POST", "/parse/batch", body: Data(#"{"requests":[]}"#.utf8), appID: nil)
        #expect(noKey.status == 403)
    }
}
