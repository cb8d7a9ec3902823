import Foundation
import Testing
@testable import GalleryApp

/// DELETE is idempotent (RFC 9110 §9.2.2; issue #13, item 2): however often a client, an SDK's
/// method override, a batch or a proxy re-sends it, a photo or gallery only moves to Recently
/// Deleted. Deleting for good is `DELETE /purge/<Class>/<id>`.
@Suite struct IdempotentDeleteTests {
    @Test func retriedDelete_InEveryForm_NeverPurges() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let photo = try server.uploadPhoto(try TestJPEG.make(width: 64, height: 48, seed: 61))
        let gallery = try #require(try server.json("POST", "/parse/classes/Gallery", ["name": "Kept"]).json["objectId"] as? String)
        let original = try server.application.pool.query("select key from files")[0].decode(String.self, "key")
        for (className, id) in [("Photo", photo), ("Gallery", gallery)] {
            for _ in 0..<5 {
                let direct = try server.request("DELETE", "/parse/classes/\(className)/\(id)")
                #expect(direct.status == 200 && direct.text == "{}", "\(direct.text)")
                let overridden = try server.json("POST", "/parse/classes/\(className)/\(id)", ["_method": "DELETE"])
                #expect(overridden.status == 200 && overridden.text == "{}", "\(overridden.text)")
                let batch = try server.json("POST", "/parse/batch", [
                    "requests": [["method": "DELETE", "path": "/parse/classes/\(className)/\(id)"]],
                ])
                #expect(batch.status == 200 && batch.text == "[{\"success\":{}}]", "\(batch.text)")
            }
            let fetched = try server.request("GET", "/parse/classes/\(className)/\(id)")
            #expect(fetched.status == 200)
            #expect((fetched.json["deletedAt"] as? [String: Any])?["__type"] as? String == "Date")
        }
        #expect(FileManager.default.fileExists(atPath: server.storage + "/" + original))

        // Purging needs the app's keys, and happens once: a repeat is 101.
        #expect(try server.request("DELETE", "/parse/purge/Photo/\(photo)", appID: nil).status == 403)
        #expect(try server.request("DELETE", "/parse/purge/Photo/\(photo)").status == 200)
        #expect(!FileManager.default.fileExists(atPath: server.storage + "/" + original))
        let again = try server.request("DELETE", "/parse/purge/Photo/\(photo)")
        #expect(again.status == 404 && again.json["code"] as? Int == 101)
        #expect(try server.request("DELETE", "/parse/purge/Gallery/\(gallery)", headers: ["X-Parse-Master-Key": TestServer.masterKey]).status == 200)
        #expect(try server.request("GET", "/parse/classes/Gallery/\(gallery)").status == 404)
        // Classes without Recently Deleted, and ids no object can have.
        let item = try server.request("DELETE", "/parse/purge/GalleryItem/abcdefghij")
        #expect(item.status == 400 && item.json["code"] as? Int == 119)
        #expect(try server.request("DELETE", "/parse/purge/Photo/no%20such").status == 404)
        #expect(try server.request("DELETE", "/parse/purge/Nope/abcdefghij").json["code"] as? Int == 103)
    }
}
