import Foundation
import Testing

@testable import GalleryApp

/// `include` through pointers of custom classes, to custom and built-in classes, dotted paths and
/// `*`: each included object obeys its class's access; a pointer to an object that is gone (or not
/// the caller's to read) is left out, as Parse Server leaves it out.
struct CustomIncludeTests {
    private func created(_ response: TestServer.Response) throws -> String {
        try #require(response.json["objectId"] as? String, "\(response.status) \(response.text)")
    }

    private func pointer(_ className: String, _ id: String) -> [String: Any] {
        ["__type": "Pointer", "className": className, "objectId": id]
    }

    /// The results of a find of Resource with `query` (a raw query string).
    private func results(_ server: TestServer, _ query: String, headers: [String: String] = [:]) throws
        -> [[String: Any]]
    {
        let response = try server.request("GET", "/parse/classes/Resource?order=filename&" + query, headers: headers)
        #expect(response.status == 200, "\(response.text)")
        return response.json["results"] as? [[String: Any]] ?? []
    }

    @Test func include_ThroughCustomAndBuiltInClasses() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let alice = try server.makeUser("alice")
        let bob = try server.makeUser("bob")
        let alicePhoto = try #require(try server.insertPhotos(1, owner: alice.objectId).first)
        let bobPhoto = try #require(try server.insertPhotos(1, owner: bob.objectId).first)
        let camera = try created(try server.json("POST", "/parse/classes/Camera", ["brand": "Leica"]))
        let exif = try created(
            try server.json("POST", "/parse/classes/EXIF", ["iso": 200, "camera": pointer("Camera", camera)]))
        let gone = try created(try server.json("POST", "/parse/classes/EXIF", ["iso": 800]))
        _ = try created(
            try server.json(
                "POST", "/parse/classes/Resource",
                [
                    "filename": "a.jpg", "exifData": pointer("EXIF", exif), "photo": pointer("Photo", alicePhoto),
                    "author": pointer("_User", alice.objectId),
                ]))
        _ = try created(
            try server.json(
                "POST", "/parse/classes/Resource",
                ["filename": "b.jpg", "exifData": pointer("EXIF", gone), "photo": pointer("Photo", bobPhoto)]))
        #expect(try server.request("DELETE", "/parse/classes/EXIF/\(gone)").status == 200)

        // One level; the deleted object's pointer is left out; without include it stays a pointer.
        var found = try results(server, "include=exifData")
        let included = try #require(found.first?["exifData"] as? [String: Any])
        #expect(included["__type"] as? String == "Object" && included["className"] as? String == "EXIF")
        #expect(included["iso"] as? Double == 200 && included["objectId"] as? String == exif)
        #expect((included["camera"] as? [String: Any])?["__type"] as? String == "Pointer")
        #expect(found.count == 2 && found[1]["exifData"] == nil, "\(found)")
        found = try results(server, "")
        #expect((found[1]["exifData"] as? [String: Any])?["objectId"] as? String == gone)

        // Dotted: the camera inside the EXIF.
        found = try results(server, "include=exifData.camera")
        let nested = (found.first?["exifData"] as? [String: Any])?["camera"] as? [String: Any]
        #expect(nested?["brand"] as? String == "Leica" && nested?["__type"] as? String == "Object", "\(found)")

        // `*`: every pointer; a built-in Photo and a _User (no email for another user).
        found = try results(server, "include=*")
        #expect((found.first?["photo"] as? [String: Any])?["className"] as? String == "Photo")
        #expect((found.first?["author"] as? [String: Any])?["username"] as? String == "alice")

        // A get with a dotted include.
        let resource = try #require(found.first?["objectId"] as? String)
        let one = try server.request("GET", "/parse/classes/Resource/\(resource)?include=exifData.camera")
        #expect(
            ((one.json["exifData"] as? [String: Any])?["camera"] as? [String: Any])?["brand"] as? String == "Leica",
            "\(one.text)")

        // Access: each user sees their own photo included, not the other's.
        for className in ["Resource", "EXIF", "Camera"] {
            #expect(
                try server.json(
                    "PUT", "/parse/schemas/\(className)",
                    ["classLevelPermissions": ["find": ["*": true], "get": ["*": true]]]
                ).status == 200)
        }
        found = try results(server, "include=photo", headers: bob.headers)
        #expect(found.count == 2 && found[0]["photo"] == nil, "\(found)")
        #expect((found[1]["photo"] as? [String: Any])?["objectId"] as? String == bobPhoto)
        // Camera's get closed to users: the include is refused (119), as Parse Server's include query is.
        #expect(
            try server.json("PUT", "/parse/schemas/Camera", ["classLevelPermissions": ["find": ["*": true]]]).status
                == 200)
        let refused = try server.request(
            "GET", "/parse/classes/Resource?include=exifData.camera", headers: alice.headers)
        #expect(refused.json["code"] as? Int == 119, "\(refused.text)")
        #expect(try results(server, "include=exifData", headers: alice.headers).count == 2)
    }

    @Test func include_Refused_With102() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        _ = try created(try server.json("POST", "/parse/classes/EXIF", ["iso": 1]))
        let exif = try #require(
            (try server.request("GET", "/parse/classes/EXIF").json["results"] as? [[String: Any]])?.first?["objectId"]
                as? String)
        _ = try created(
            try server.json(
                "POST", "/parse/classes/Resource", ["filename": "a", "exifData": pointer("EXIF", exif)]))
        for include in ["nope", "filename", "exifData.nope", "exifData.iso", "exifData.a.b.c.d.e"] {
            let response = try server.request("GET", "/parse/classes/Resource?include=\(include)")
            #expect(response.json["code"] as? Int == 102, "\(include): \(response.text)")
        }
        // Photo's owner, a pointer without a join: now included.
        let user = try server.makeUser("dora")
        _ = try server.insertPhotos(1, owner: user.objectId)
        let photos = try server.request("GET", "/parse/classes/Photo?include=owner")
        let owner = (photos.json["results"] as? [[String: Any]])?.first?["owner"] as? [String: Any]
        #expect(owner?["username"] as? String == "dora" && owner?["__type"] as? String == "Object", "\(photos.text)")
    }
}
