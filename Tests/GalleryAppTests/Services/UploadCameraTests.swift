import Foundation
import Testing

@testable import GalleryApp

/// The camera's EXIF Make and Model, read at upload, on the photo through the Parse API (find,
/// get, `keys`, `where`); hostile values cleaned or ignored, never a refused upload.
@Suite(.serialized) struct UploadCameraTests {
    typealias F = ManifestFixtures

    @Test func photo_HasTheCameraOfItsOriginal_ThroughGetFindKeysAndWhere() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let iphone = TestJPEG.withCamera(
            try TestJPEG.make(width: 48, height: 32, seed: 281), make: Array("Apple".utf8),
            model: Array("iPhone 15 Pro".utf8))
        let id = try server.uploadPhoto(iphone)
        let plain = try server.uploadPhoto(try TestJPEG.make(width: 48, height: 32, seed: 282))

        let photo = try server.request("GET", "/parse/classes/Photo/\(id)").json
        #expect(photo["cameraMake"] as? String == "Apple")
        #expect(photo["cameraModel"] as? String == "iPhone 15 Pro")
        // Absent, not null, when the original has none (as takenAt).
        let other = try server.request("GET", "/parse/classes/Photo/\(plain)").json
        #expect(other["objectId"] as? String == plain)
        #expect(other.keys.contains("cameraMake") == false && other.keys.contains("cameraModel") == false)

        let kept = try F.find(server, ["keys": "cameraMake,cameraModel", "where": F.json(["objectId": id])])
        let only = try #require(F.results(kept).first)
        #expect(only["cameraModel"] as? String == "iPhone 15 Pro")
        #expect(only["title"] == nil && only["width"] == nil)

        #expect(F.ids(try F.find(server, ["where": F.json(["cameraMake": "Apple"])])) == [id])
        #expect(F.ids(try F.find(server, ["where": F.json(["cameraModel": ["$exists": false]])])) == [plain])
        let sorted = try F.find(server, ["order": "cameraModel", "keys": "cameraModel"])
        #expect(sorted.status == 200 && F.ids(sorted).count == 2)
    }

    @Test func upload_CleansOrIgnoresHostileCameraStrings() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        // Control characters and invalid UTF-8 dropped, the model cut to 64 characters.
        let hostile = TestJPEG.withCamera(
            try TestJPEG.make(width: 48, height: 32, seed: 283), make: [0x4E, 0x49, 0x1B, 0xFF, 0x4B, 0x4F, 0x4E],
            model: Array(String(repeating: "Z", count: 900).utf8))
        let id = try server.uploadPhoto(hostile)
        let photo = try server.request("GET", "/parse/classes/Photo/\(id)").json
        #expect(photo["cameraMake"] as? String == "NIKON")
        #expect(photo["cameraModel"] as? String == String(repeating: "Z", count: 64))
        // Only blanks and NULs: no camera, and the upload is still a photo.
        let blank = TestJPEG.withCamera(
            try TestJPEG.make(width: 48, height: 32, seed: 284), make: [0x20, 0x09], model: [])
        let blankId = try server.uploadPhoto(blank)
        let blankPhoto = try server.request("GET", "/parse/classes/Photo/\(blankId)").json
        #expect(blankPhoto["width"] as? Int == 48)
        #expect(blankPhoto["cameraMake"] == nil && blankPhoto["cameraModel"] == nil)
    }
}
