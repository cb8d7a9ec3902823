import Foundation
import Testing

@testable import GalleryApp

/// The app id alone (no session, no master key) grants nothing on Photo, Gallery and GalleryItem
/// unless the operator granted it (issue #25, item 1): not on a fresh install without accounts,
/// not after the last account is deleted. There is no single-tenant mode.
@Suite struct AnonymousAccessTests {
    private typealias F = ManifestFixtures

    private static let master = ["X-Parse-Master-Key": TestServer.masterKey]

    /// A server holding ownerless rows (as a single-tenant install left them): three photos, a
    /// gallery whose ACL gives `*` read, and an item of it; with no account, or with one made
    /// and deleted again.
    private static func server(lastAccountDeleted: Bool) throws -> (
        server: TestServer, photos: [String], gallery: String, item: String
    ) {
        let server = try TestServer(workers: 0)
        let photos = try server.insertPhotos(3)
        let gallery = try #require(
            try server.json("POST", "/parse/classes/Gallery", ["name": "Everyone's", "ACL": ["*": ["read": true]]])
                .json["objectId"]
                as? String)
        let item = try server.addedItem(gallery: gallery, photo: photos[0])
        if lastAccountDeleted {
            let user = try server.makeUser("only", admin: true)
            let deleted = try server.request("DELETE", "/parse/users/\(user.objectId)", headers: master)
            #expect(deleted.status == 200, "\(deleted.text)")
            let left = try server.application.pool.query("select count(*) from users").first?.decode(Int64.self, 0)
            #expect(left == 0)
        }
        return (server, photos, gallery, item)
    }

    @Test(arguments: [false, true])
    func appIdAlone_ListsCountsAndGetsNothing(lastAccountDeleted: Bool) throws {
        let (server, photos, gallery, item) = try Self.server(lastAccountDeleted: lastAccountDeleted)
        defer { server.stop() }
        for className in ["Photo", "Gallery", "GalleryItem"] {
            let found = try F.find(
                server, ["include": className == "GalleryItem" ? "photo,gallery" : ""].filter { !$0.value.isEmpty },
                className: className, anonymous: true)
            #expect(found.status == 200 && F.results(found).isEmpty, "\(className): \(found.text)")
            let counted = try F.find(server, ["count": "1", "limit": "0"], className: className, anonymous: true)
            #expect(counted.status == 200 && counted.json["count"] as? Int == 0, "\(className): \(counted.text)")
            // A condition takes the counting path that reads the table, not the counters.
            let filtered = try F.find(
                server, ["count": "1", "where": F.json(["objectId": ["$exists": true]])],
                className: className, anonymous: true)
            #expect(
                filtered.json["count"] as? Int == 0 && F.results(filtered).isEmpty, "\(className): \(filtered.text)")
        }
        for path in ["Photo/\(photos[0])", "Gallery/\(gallery)", "GalleryItem/\(item)?include=photo"] {
            let r = try server.request("GET", "/parse/classes/" + path, anonymous: true)
            #expect(r.status == 404 && F.code(r) == 101, "\(path): \(r.text)")
        }
        let users = try server.request("GET", "/parse/users", anonymous: true)
        #expect(F.code(users) == 209, "\(users.text)")
        // The master key still reads everything.
        #expect(try F.find(server, ["count": "1", "limit": "0"]).json["count"] as? Int == 3)
    }

    @Test(arguments: [false, true])
    func appIdAlone_UploadsCreatesTrashesAndPurgesNothing(lastAccountDeleted: Bool) throws {
        let (server, photos, gallery, _) = try Self.server(lastAccountDeleted: lastAccountDeleted)
        defer { server.stop() }
        let jpeg = try TestJPEG.make(width: 32, height: 24, seed: 3)
        let upload = try server.request(
            "POST", "/parse/files/a.jpg", body: Data(jpeg), headers: ["Content-Type": "image/jpeg"], anonymous: true)
        #expect(upload.status == 400 && F.code(upload) == 130, "\(upload.text)")
        let stored = try server.request(
            "POST", "/parse/files/a.jpg", body: Data(jpeg), headers: ["Content-Type": "image/jpeg"])
        let name = try #require(stored.json["name"] as? String, "the master key uploads: \(stored.text)")
        for (className, body) in [
            ("Photo", ["original": ["__type": "File", "name": name]] as [String: Any]), ("Gallery", ["name": "x"]),
        ] {
            let r = try server.json("POST", "/parse/classes/\(className)", body, anonymous: true)
            #expect(r.status == 400 && F.code(r) == 119, "\(className): \(r.text)")
        }
        let put = try server.json("PUT", "/parse/classes/Photo/\(photos[0])", ["title": "mine"], anonymous: true)
        #expect(F.code(put) == 101, "\(put.text)")
        let trash = try server.request("DELETE", "/parse/classes/Photo/\(photos[0])", anonymous: true)
        #expect(trash.status == 404 && F.code(trash) == 101, "\(trash.text)")
        #expect(F.code(try server.request("DELETE", "/parse/classes/Gallery/\(gallery)", anonymous: true)) == 101)
        // A photo in the trash is not the app id's to purge either.
        #expect(try server.request("DELETE", "/parse/classes/Photo/\(photos[1])").status == 200)
        let purge = try server.request("DELETE", "/parse/purge/Photo/\(photos[1])", anonymous: true)
        #expect(purge.status == 404 && F.code(purge) == 101, "\(purge.text)")
        #expect(try server.request("DELETE", "/parse/purge/Photo", anonymous: true).status == 403)
        // Nothing changed: two live photos, the trashed one still there, no new rows.
        #expect(try F.find(server, ["count": "1", "limit": "0"]).json["count"] as? Int == 2)
        let rows = try server.application.pool.query("select count(*) from photos").first?.decode(Int64.self, 0)
        #expect(rows == 3)
        let first = try server.request("GET", "/parse/classes/Photo/\(photos[0])")
        #expect(first.json["title"] as? String == "" && first.json["deletedAt"] == nil)
    }

    @Test func upload_WithoutASession_IsRefusedOnItsHead_BeforeAnyOfTheBodyIsSent() throws {
        // A long body timeout: only an answer given on the head can arrive in time.
        let server = try TestServer(workers: 0, listening: true) { $0.bodyTimeoutMs = 60_000 }
        defer { server.stop() }
        let port = server.application.port
        for (extra, code) in [("", 130), ("X-Parse-Session-Token: not a token\r\n", 209)] {
            let started = Date()
            let r = try RawHTTP.exchange(
                port: port,
                head: "POST /parse/files/a.jpg HTTP/1.1\r\nHost: t\r\nX-Parse-Application-Id: gallery\r\n\(extra)"
                    + "Content-Type: image/jpeg\r\nContent-Length: 5000000\r\n\r\n")
            let json = (try? JSONSerialization.jsonObject(with: Data(r.body))) as? [String: Any]
            #expect(
                r.status == 400 && json?["code"] as? Int == code,
                "\(extra): \(r.status) \(String(decoding: r.body, as: UTF8.self))")
            #expect(Date().timeIntervalSince(started) < 30, "answered without waiting for the body")
        }
        let spooled =
            (try? FileManager.default.contentsOfDirectory(atPath: server.application.store.spoolDirectory)) ?? []
        #expect(spooled.isEmpty, "nothing was spooled")
    }

    /// What the trigger announced before the first account (`noAccounts: true`) no longer opens
    /// LiveQuery to the app id alone; `public_read` still shows what its ACL gives `*`.
    @Test func liveQuery_AppIdAlone_ReceivesNothing_WhateverThePayloadSays() throws {
        for noAccounts in [true, false] {
            for className in ["Photo", "Gallery", "GalleryItem"] {
                let payload =
                    #"{"className":"\#(className)","op":"insert","old":null,"new":{"object_id":"abc","owner_id":null,"acl":{}},"#
                    + #""gallery":{"owner_id":null,"acl":{}},"noAccounts":\#(noAccounts)}"#
                let event = try #require(LiveQueryEvent.decode(payload).event)
                #expect(
                    !event.readable(event.new!, by: ParseAccess(caller: .anonymous)),
                    "\(className) noAccounts=\(noAccounts)")
                #expect(
                    !event.readable(event.new!, by: ParseAccess(caller: .anonymous, publicRead: true)), "\(className)")
                #expect(event.readable(event.new!, by: .master))
            }
        }
        let open =
            #"{"className":"Gallery","op":"insert","old":null,"new":{"object_id":"abc","acl":{"*":{"read":true}}}}"#
        let event = try #require(LiveQueryEvent.decode(open).event)
        #expect(event.readable(event.new!, by: ParseAccess(caller: .anonymous, publicRead: true)))
        #expect(!event.readable(event.new!, by: ParseAccess(caller: .anonymous)))
    }
}
