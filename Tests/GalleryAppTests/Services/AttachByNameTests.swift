import Foundation
import Testing

@testable import GalleryApp

/// Attaching a stored file to a photo by its name (issue #25, item 7): a file is attached only by
/// the caller who uploaded it (or the master key), someone else's file and no file get the same
/// answer, two users' uploads of the same bytes are two photos with their own names sharing one
/// stored original, and one user's purge never removes the bytes another's photo or upload needs.
struct AttachByNameTests {
    private typealias F = ManifestFixtures
    private static let master = ["X-Parse-Master-Key": TestServer.masterKey]

    /// `POST /parse/files/<name>` as `user`; the stored file's name.
    private func upload(_ server: TestServer, _ jpeg: [UInt8], as name: String, _ user: TestUser) throws -> String {
        var headers = user.headers
        headers["Content-Type"] = "image/jpeg"
        let file = try server.request("POST", "/parse/files/\(name)", body: Data(jpeg), headers: headers)
        #expect(file.status == 201, "\(file.text)")
        return try #require(file.json["name"] as? String)
    }

    /// `POST /parse/classes/Photo` naming `file`.
    private func create(_ server: TestServer, file: String, _ headers: [String: String]) throws -> TestServer.Response {
        try server.json(
            "POST", "/parse/classes/Photo", ["original": ["__type": "File", "name": file]], headers: headers)
    }

    private func objectId(_ response: TestServer.Response) throws -> String {
        try #require(response.json["objectId"] as? String, "create failed: \(response.status) \(response.text)")
    }

    private func photoCount(_ server: TestServer) throws -> Int {
        try server.application.pool.query("select count(*) from photos")[0].decode(Int.self, 0)
    }

    @Test func attach_SomeoneElsesFile_IsAnsweredExactlyLikeNoFile() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let a = try server.makeUser("alice")
        let b = try server.makeUser("bob")
        let name = try upload(server, try TestJPEG.make(width: 48, height: 32, seed: 301), as: "secret.jpg", a)

        let theirs = try create(server, file: name, b.headers)
        let none = try create(server, file: String(repeating: "ab", count: 32) + ".jpg", b.headers)
        #expect(theirs.status == 400)
        #expect(theirs.status == none.status)
        #expect(theirs.json["code"] as? Int == none.json["code"] as? Int)
        #expect(theirs.json["error"] as? String == none.json["error"] as? String)
        #expect(theirs.text == none.text)
        #expect(try photoCount(server) == 0)

        // The uploader attaches it; so may the master key (for any owner).
        #expect(try create(server, file: name, a.headers).status == 201)
        let byMaster = try server.json(
            "POST", "/parse/classes/Photo",
            [
                "original": ["__type": "File", "name": name], "owner": TestServer.pointer("_User", b.objectId),
            ], headers: Self.master)
        #expect(byMaster.status == 201, "\(byMaster.text)")
        // Now that bob owns a photo of these bytes (the master key made it), his create gives it back.
        let again = try create(server, file: name, b.headers)
        #expect(again.status == 200)
        #expect(try objectId(again) == (try objectId(byMaster)))
    }

    @Test func sameBytes_TwoUsers_EachGetTheirOwnPhoto_WithTheirOwnName_SharingOneOriginal() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let a = try server.makeUser("alice")
        let b = try server.makeUser("bob")
        let jpeg = try TestJPEG.make(width: 48, height: 32, seed: 302)

        let nameA = try upload(server, jpeg, as: "alice-beach.jpg", a)
        let createdA = try create(server, file: nameA, a.headers)
        #expect(createdA.status == 201)
        let photoA = try objectId(createdA)
        let nameB = try upload(server, jpeg, as: "bob-holiday.jpg", b)
        #expect(nameB == nameA)
        let createdB = try create(server, file: nameB, b.headers)
        #expect(createdB.status == 201)
        let photoB = try objectId(createdB)
        #expect(photoB != photoA)

        let seenA = try server.request("GET", "/parse/classes/Photo/\(photoA)", headers: a.headers)
        let seenB = try server.request("GET", "/parse/classes/Photo/\(photoB)", headers: b.headers)
        #expect(seenA.json["filename"] as? String == "alice-beach.jpg")
        #expect(seenB.json["filename"] as? String == "bob-holiday.jpg")
        #expect(try server.request("GET", "/parse/classes/Photo/\(photoA)", headers: b.headers).status == 404)

        // The same user with the same bytes: the same photo (200), by a new upload or a retried create.
        let nameA2 = try upload(server, jpeg, as: "renamed.jpg", a)
        let again = try create(server, file: nameA2, a.headers)
        #expect(again.status == 200)
        #expect(try objectId(again) == photoA)
        let retried = try create(server, file: nameA, a.headers)
        #expect(retried.status == 200)
        #expect(try objectId(retried) == photoA)

        // One stored original, no upload left waiting.
        let pool = server.application.pool
        #expect(try pool.query("select count(*) from files")[0].decode(Int.self, 0) == 1)
        #expect(try pool.query("select count(*) from file_uploads")[0].decode(Int.self, 0) == 0)
        #expect(try photoCount(server) == 2)
    }

    @Test func unsharedReader_WhoSawTheName_CannotAttachTheOriginal() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let a = try server.makeUser("alice")
        let b = try server.makeUser("bob")
        let name = try upload(server, try TestJPEG.make(width: 48, height: 32, seed: 303), as: "private.jpg", a)
        let photo = try objectId(try create(server, file: name, a.headers))
        let gallery = try objectId(
            try server.json(
                "POST", "/parse/classes/Gallery",
                [
                    "name": "shared", "ACL": [a.objectId: ["read": true, "write": true], b.objectId: ["read": true]],
                ], headers: a.headers))
        #expect(
            try server.json(
                "POST", "/parse/classes/GalleryItem",
                [
                    "gallery": TestServer.pointer("Gallery", gallery), "photo": TestServer.pointer("Photo", photo),
                ], headers: a.headers
            ).status == 201)

        // Bob reads the photo through the shared gallery, the original's name with it.
        let items = try F.find(
            server,
            [
                "where": F.json(["gallery": TestServer.pointer("Gallery", gallery)]), "include": "photo",
            ], className: "GalleryItem", headers: b.headers)
        let included = try #require(F.results(items).first?["photo"] as? [String: Any], "\(items.text)")
        #expect((included["original"] as? [String: Any])?["name"] as? String == name)

        // Alice unshares; what bob saw does not make the bytes his.
        #expect(
            try server.json(
                "PUT", "/parse/classes/Gallery/\(gallery)",
                [
                    "ACL": [a.objectId: ["read": true, "write": true]]
                ], headers: a.headers
            ).status == 200)
        let attach = try create(server, file: name, b.headers)
        let none = try create(server, file: String(repeating: "cd", count: 32) + ".jpg", b.headers)
        #expect(attach.status == 400)
        #expect(attach.text == none.text)
        #expect(try photoCount(server) == 1)
    }

    @Test func purge_ByOneUser_NeverRemovesTheBytesOfAnothersPhotoOrUpload() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let a = try server.makeUser("alice")
        let b = try server.makeUser("bob")
        let c = try server.makeUser("carol")
        let jpeg = try TestJPEG.make(width: 48, height: 32, seed: 304)
        let name = try upload(server, jpeg, as: "a.jpg", a)
        let photoA = try objectId(try create(server, file: name, a.headers))
        _ = try upload(server, jpeg, as: "b.jpg", b)
        let photoB = try objectId(try create(server, file: name, b.headers))
        _ = try upload(server, jpeg, as: "c.jpg", c)  // uploaded, not attached yet
        let original = server.storage + "/originals/" + name
        func originalIsIntact() -> Bool {
            (try? FileManager.default.attributesOfItem(atPath: original))?[.size] as? Int == jpeg.count
        }

        #expect(try server.request("DELETE", "/parse/classes/Photo/\(photoA)", headers: a.headers).status == 200)
        #expect(try server.request("DELETE", "/parse/purge/Photo/\(photoA)", headers: a.headers).status == 200)
        #expect(originalIsIntact())
        #expect(try server.request("GET", "/parse/classes/Photo/\(photoB)", headers: b.headers).status == 200)
        // Alice's photo is gone, and with it her claim on the bytes.
        #expect(try create(server, file: name, a.headers).status == 400)

        #expect(try server.request("DELETE", "/parse/classes/Photo/\(photoB)", headers: b.headers).status == 200)
        #expect(try server.request("DELETE", "/parse/purge/Photo/\(photoB)", headers: b.headers).status == 200)
        #expect(originalIsIntact(), "carol's pending upload keeps the bytes")
        let photoC = try create(server, file: name, c.headers)
        #expect(photoC.status == 201)
        #expect(
            try server.request("GET", "/parse/classes/Photo/\(try objectId(photoC))", headers: c.headers).json[
                "filename"] as? String == "c.jpg")

        let photoCId = try objectId(photoC)
        #expect(try server.request("DELETE", "/parse/classes/Photo/\(photoCId)", headers: c.headers).status == 200)
        #expect(try server.request("DELETE", "/parse/purge/Photo/\(photoCId)", headers: c.headers).status == 200)
        #expect(!FileManager.default.fileExists(atPath: original), "the last reference gone, the bytes go")
        #expect(try server.application.pool.query("select count(*) from files")[0].decode(Int.self, 0) == 0)
    }

    /// One user's photo purged while another user uploads the same bytes and creates their photo:
    /// the upload's 201 always names stored bytes and the other user's photo keeps them.
    @Test func purge_RacingAnotherUsersUploadOfTheSameBytes_NeverLosesTheUpload() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let users = [try server.makeUser("alice"), try server.makeUser("bob")]
        let jpeg = try TestJPEG.make(width: 48, height: 32, seed: 305)
        let name = try upload(server, jpeg, as: "race.jpg", users[0])
        var photo = try objectId(try create(server, file: name, users[0].headers))
        let original = server.storage + "/originals/" + name
        let race = PurgeRace(server: server, jpeg: jpeg, original: original)
        for round in 0..<100 {
            // The photo of one user is trashed and purged while the other uploads the bytes.
            let owner = users[round % 2]
            let other = users[(round + 1) % 2]
            #expect(try server.request("DELETE", "/parse/classes/Photo/\(photo)", headers: owner.headers).status == 200)
            let created = race.round(
                round, purging: photo, purgeHeaders: owner.headers, uploadHeaders: other.headers)
            guard let id = created else { break }
            if try server.request("GET", "/parse/classes/Photo/\(id)", headers: other.headers).status != 200 {
                race.failures.withValue { $0.append("round \(round): photo \(id) missing after the race") }
            }
            if !race.failures.current.isEmpty { break }
            photo = id
        }
        // Exactly one photo and one files row for the bytes, no upload left waiting.
        try race.expectNoFailuresAndOneStoredPhoto()
    }
}
