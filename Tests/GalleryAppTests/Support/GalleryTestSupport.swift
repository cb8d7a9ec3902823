import Foundation
import Testing

@testable import GalleryApp

/// Gallery calls over HTTP, as a client makes them, for the gallery tests.
extension TestServer {
    /// A Parse pointer object.
    static func pointer(_ className: String, _ objectId: String) -> [String: Any] {
        ["__type": "Pointer", "className": className, "objectId": objectId]
    }

    /// `text` percent-encoded for a query string value.
    static func queryValue(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
    }

    /// `object` as compact JSON text.
    static func jsonText(_ object: Any) -> String {
        String(decoding: try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
    }

    /// Creates a gallery over HTTP and returns its objectId (the request must succeed).
    func createGallery(_ name: String) throws -> String {
        let r = try json("POST", "/parse/classes/Gallery", ["name": name])
        guard r.status == 201, let id = r.json["objectId"] as? String else {
            throw TestSetupError(description: "gallery create failed: \(r.status) \(r.text)")
        }
        return id
    }

    /// `POST /classes/GalleryItem`.
    func addItem(gallery: String, photo: String, position: Int? = nil) throws -> Response {
        var body: [String: Any] = ["gallery": Self.pointer("Gallery", gallery), "photo": Self.pointer("Photo", photo)]
        if let position { body["position"] = position }
        return try json("POST", "/parse/classes/GalleryItem", body)
    }

    /// Adds a photo at the end and returns the item's objectId (the request must succeed).
    func addedItem(gallery: String, photo: String, position: Int? = nil) throws -> String {
        let r = try addItem(gallery: gallery, photo: photo, position: position)
        guard r.status == 201, let id = r.json["objectId"] as? String else {
            throw TestSetupError(description: "item add failed: \(r.status) \(r.text)")
        }
        return id
    }

    /// `PUT /classes/GalleryItem/<id>` with a new position.
    func moveItem(_ item: String, to position: Int) throws -> Response {
        try json("PUT", "/parse/classes/GalleryItem/\(item)", ["position": position])
    }

    /// The gallery's visible items in position order: (item objectId, photo objectId, position).
    func items(of gallery: String) throws -> [(item: String, photo: String, position: Int)] {
        let whereText = Self.queryValue(Self.jsonText(["gallery": Self.pointer("Gallery", gallery)]))
        let r = try request("GET", "/parse/classes/GalleryItem?where=\(whereText)&order=position&limit=1000")
        guard r.status == 200, let results = r.json["results"] as? [[String: Any]] else {
            throw TestSetupError(description: "item query failed: \(r.status) \(r.text)")
        }
        return results.map { item in
            let photo = item["photo"] as? [String: Any]
            return (
                item["objectId"] as? String ?? "", photo?["objectId"] as? String ?? "", item["position"] as? Int ?? -1
            )
        }
    }

    /// The photo objectIds of the gallery's visible items, in order.
    func photoOrder(of gallery: String) throws -> [String] {
        try items(of: gallery).map(\.photo)
    }

    /// `GET /classes/Gallery/<id>` as JSON (status 200 required).
    func gallery(_ objectId: String) throws -> [String: Any] {
        let r = try request("GET", "/parse/classes/Gallery/\(objectId)")
        guard r.status == 200 else { throw TestSetupError(description: "gallery get failed: \(r.status) \(r.text)") }
        return r.json
    }

    /// Every item row of a gallery straight from the database (hidden ones too), by position.
    func storedItems(of gallery: String) throws -> [(photo: String, position: Int)] {
        try application.pool.query(
            "select photo_id, position from gallery_items where gallery_id = $1 order by position", [gallery]
        ).map { (try $0.decode(String.self, "photo_id"), try $0.decode(Int.self, "position")) }
    }

    /// Inserts `count` photo rows directly (no upload, no blobs): fast for tests that only need ids.
    func insertPhotos(_ count: Int) throws -> [String] {
        var ids: [String] = []
        for _ in 0..<count {
            let id = ParseObjectID.generate()
            let checksum = (0..<4).map { _ in String(format: "%016llx", UInt64.random(in: 0...UInt64.max)) }.joined()
            try application.pool.query(
                """
                insert into photos (object_id, filename, byte_size, checksum, width, height, aspect_ratio, original_key, status)
                values ($1, $2, 1000, $3, 400, 300, 1.3333333333333333, $4, 'ready')
                """, [id, "row-\(id).jpg", checksum, "originals/\(checksum).jpg"])
            ids.append(id)
        }
        return ids
    }

    /// Fails the test unless the gallery's stored positions are exactly 0…n−1 and `photoCount`
    /// counts the items whose photo is live.
    func expectConsistent(_ gallery: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let stored = try storedItems(of: gallery)
        #expect(
            stored.map(\.position) == Array(0..<stored.count), "positions are not 0…n−1", sourceLocation: sourceLocation
        )
        let live = try application.pool.query(
            """
            select count(*)::bigint as n from gallery_items gi join photos p on p.object_id = gi.photo_id
            where gi.gallery_id = $1 and p.deleted_at is null
            """, [gallery]
        ).first!.decode(Int.self, "n")
        let counted = try application.pool.query("select photo_count from galleries where object_id = $1", [gallery])
            .first?.decode(Int.self, "photo_count")
        #expect(
            counted == live, "photo_count \(String(describing: counted)) but \(live) live items",
            sourceLocation: sourceLocation)
    }
}
