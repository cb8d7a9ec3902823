import Foundation
import Testing

@testable import GalleryApp

/// ToyPhotoGallery (voxels/ToyPhotoGallery, an iOS app on Parse Server) against galleryd, set up
/// as its README sets up its own Parse Server — the class `Resource` made through the schema API,
/// rows posted with the application id alone while `create` is open, then the class-level
/// permissions set to public read and `Administrator`-role write — and read with the requests its
/// `ParseInterface` makes through the Parse iOS SDK: a count (`limit=0`), then pages of 20 by
/// `-createdAt` with `skip` until a short page.
@Suite struct ToyPhotoGalleryReplayTests {
    /// The headers the Parse iOS SDK sends (no session, no other key).
    static let sdkHeaders = [
        "X-Parse-Client-Version": "i1.17.3", "X-Parse-Installation-Id": "5d3f1a2b-0000-4000-8000-000000000001",
        "X-Parse-OS-Version": "12.1 (16B91)", "X-Parse-App-Build-Version": "1", "X-Parse-App-Display-Version": "1.0",
    ]

    @Test func toyPhotoGallery_CountsAndPagesResources_WithTheAppIdAlone() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        // Its README's setup: the classes, then one row per image with only the application id.
        #expect(
            try server.json(
                "POST", "/parse/schemas/Resource",
                [
                    "fields": [
                        "filename": ["type": "String"], "thumbnailURLString": ["type": "String"],
                        "fileURLString": ["type": "String"],
                        "exifData": ["type": "Pointer", "targetClass": "EXIF"],
                    ],
                    "classLevelPermissions": ["create": ["*": true]],
                ]
            ).status == 200)
        #expect(try server.json("POST", "/parse/schemas/EXIF", ["fields": ["data": ["type": "Object"]]]).status == 200)
        let file = try server.request(
            "POST", "/parse/files/a.jpg", body: Data(try TestJPEG.make(width: 32, height: 24, seed: 7)),
            headers: ["Content-Type": "image/jpeg"])
        let url = try #require(file.json["url"] as? String)
        let total = 47
        for n in 0..<total {
            let created = try server.json(
                "POST", "/parse/classes/Resource",
                [
                    "filename": "image\(n).jpg", "thumbnailURLString": url, "fileURLString": url,
                ], headers: Self.sdkHeaders, anonymous: true)
            #expect(created.status == 201, "\(created.text)")
        }
        // Then public read, Administrator-role write.
        let admin = ["role:Administrator": true]
        #expect(
            try server.json(
                "PUT", "/parse/schemas/Resource",
                [
                    "classLevelPermissions": [
                        "find": ["*": true], "get": ["*": true], "count": ["*": true],
                        "create": admin, "update": admin, "delete": admin, "addField": admin,
                    ]
                ]
            ).status == 200)
        #expect(
            try server.json(
                "POST", "/parse/classes/Resource", ["filename": "x"], headers: Self.sdkHeaders, anonymous: true
            )
            .json["code"] as? Int == 119)

        // The app: count, then pages of 20 until a short one.
        let count = try server.request(
            "GET", "/parse/classes/Resource?count=1&limit=0", headers: Self.sdkHeaders, anonymous: true)
        #expect(
            count.status == 200 && count.json["count"] as? Int == total
                && (count.json["results"] as? [Any])?.isEmpty == true, "\(count.text)")
        var seen: [String] = []
        var skip = 0
        var lastCreated = "9999"
        while true {
            let page = try server.request(
                "GET", "/parse/classes/Resource?limit=20&order=-createdAt" + (skip > 0 ? "&skip=\(skip)" : ""),
                headers: Self.sdkHeaders,
                anonymous: true)
            #expect(page.status == 200, "\(page.text)")
            let results = page.json["results"] as? [[String: Any]] ?? []
            for record in results {
                let id = try #require(record["objectId"] as? String)
                let createdAt = try #require(record["createdAt"] as? String)
                #expect(record["updatedAt"] as? String != nil)
                #expect(createdAt <= lastCreated)
                lastCreated = createdAt
                #expect((record["filename"] as? String)?.hasPrefix("image") == true)
                #expect(record["thumbnailURLString"] as? String == url && record["fileURLString"] as? String == url)
                seen.append(id)
            }
            if results.count < 20 { break }
            skip += 20
        }
        #expect(seen.count == total && Set(seen).count == total)
        // The URLs load the JPEG.
        let image = try server.request("GET", try #require(URL(string: url)).path, appID: nil)
        #expect(image.status == 200 && image.body.prefix(2) == Data([0xFF, 0xD8]))
    }
}
