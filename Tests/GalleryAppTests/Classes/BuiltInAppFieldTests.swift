import Foundation
import Testing

@testable import GalleryApp

/// Fields of an app's own on the built-in classes (issue 27 item 3, "may gain custom fields (app
/// metadata on Photo)", docs/decisions/042): added and deleted through `PUT /parse/schemas/<Class>`
/// or by a save the `addField` permission allows; saved, read back, queried, sorted and
/// projected like fixed fields; fixed fields cannot be deleted (136) and a wrong type is 111.
@Suite struct BuiltInAppFieldTests {
    private typealias F = ManifestFixtures

    private func schemaFields(_ server: TestServer, _ className: String) throws -> [String: [String: Any]] {
        try server.request("GET", "/parse/schemas/\(className)").json["fields"] as? [String: [String: Any]] ?? [:]
    }

    @Test func photoAppFields_AreSavedReadQueriedSortedAndDeleted() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let photos = try server.insertPhotos(3)
        let added = try server.json(
            "PUT", "/parse/schemas/Photo",
            [
                "fields": [
                    "rating": ["type": "Number"], "album": ["type": "String"], "meta": ["type": "Object"],
                    "people": ["type": "Array"], "curator": ["type": "Pointer", "targetClass": "_User"],
                ]
            ])
        #expect(added.status == 200, "\(added.text)")
        let fields = try schemaFields(server, "Photo")
        #expect(fields["rating"]?["type"] as? String == "Number" && fields["meta"]?["type"] as? String == "Object")
        #expect(fields["curator"]?["targetClass"] as? String == "_User" && fields["title"] != nil, "\(fields)")

        let path = "/parse/classes/Photo/\(photos[0])"
        let saved = try server.json(
            "PUT", path, ["rating": 4, "album": "Trip", "meta": ["lens": "35mm"], "people": ["ann"], "title": "t"])
        #expect(saved.status == 200 && saved.json["updatedAt"] != nil, "\(saved.text)")
        #expect(try server.json("PUT", "/parse/classes/Photo/\(photos[1])", ["rating": 2]).status == 200)
        let got = try server.request("GET", path).json
        #expect(got["rating"] as? Double == 4 && got["album"] as? String == "Trip" && got["title"] as? String == "t")
        #expect((got["meta"] as? [String: Any])?["lens"] as? String == "35mm" && got["people"] as? [String] == ["ann"])
        #expect(try server.request("GET", "/parse/classes/Photo/\(photos[2])").json["rating"] == nil)

        // where, order and keys, as on a fixed field.
        #expect(F.ids(try F.find(server, ["where": F.json(["rating": ["$gt": 3]])])) == [photos[0]])
        #expect(
            F.ids(try F.find(server, ["where": F.json(["rating": ["$exists": true]]), "order": "rating"])) == [
                photos[1], photos[0],
            ])
        let projected = F.results(try F.find(server, ["where": F.json(["album": "Trip"]), "keys": "album"]))
        #expect(
            projected.count == 1 && projected.first?["album"] as? String == "Trip" && projected.first?["title"] == nil)

        // Operations and the wrong type (111, nothing written).
        #expect(try server.json("PUT", path, ["rating": ["__op": "Increment", "amount": 1]]).status == 200)
        for bad: [String: Any] in [["rating": "high"], ["album": 3], ["meta": [1]], ["rating": 1, "title": 5]] {
            let refused = try server.json("PUT", path, bad)
            #expect(refused.status == 400 && F.code(refused) == 111, "\(bad): \(refused.text)")
        }
        #expect(try server.request("GET", path).json["rating"] as? Double == 5)
        #expect(try server.json("PUT", path, ["album": ["__op": "Delete"]]).status == 200)
        #expect(try server.request("GET", path).json["album"] == nil)

        // The field itself deleted: its values go, and it is no field to query any more; an answer
        // tagged before is no 304 after.
        _ = try server.json("PUT", path, ["album": "Again"])
        let tagged = try server.request("GET", "/parse/classes/Photo?limit=5")
        let tag = try #require(tagged.header("ETag"), "\(tagged.text)")
        let dropped = try server.json("PUT", "/parse/schemas/Photo", ["fields": ["album": ["__op": "Delete"]]])
        #expect(dropped.status == 200 && (dropped.json["fields"] as? [String: Any])?["album"] == nil, "\(dropped.text)")
        #expect(try server.request("GET", path).json["album"] == nil)
        #expect(F.code(try F.find(server, ["where": F.json(["album": "Again"])])) == 102)
        let again = try server.request("GET", "/parse/classes/Photo?limit=5", headers: ["If-None-Match": tag])
        #expect(again.status == 200 && !again.text.contains("\"album\""), "\(again.status) \(again.text)")

        // Refused schema changes change nothing.
        let refusals: [([String: Any], Int)] = [
            (["fields": ["title": ["__op": "Delete"]]], 136),
            (["fields": ["rating": ["type": "String"]]], 255),
            (["fields": ["album": ["__op": "Delete"]]], 255),
            (["fields": ["bad-name": ["type": "String"]]], 105),
            (["fields": ["x": ["type": "Money"]]], 111),
            (["fields": ["likes": ["type": "Relation", "targetClass": "_User"]]], 119),
            (["fields": ["extra": ["type": "String"], "title": ["__op": "Delete"]]], 136),
        ]
        for (body, code) in refusals {
            let response = try server.json("PUT", "/parse/schemas/Photo", body)
            #expect(response.status == 400 && F.code(response) == code, "\(body): \(response.text)")
        }
        let after = try schemaFields(server, "Photo")
        #expect(after["rating"]?["type"] as? String == "Number" && after["extra"] == nil && after["title"] != nil)

        // The master key's save of an unknown field adds it, typed by its value.
        #expect(try server.json("PUT", path, ["camera2": "Leica"]).status == 200)
        #expect(try schemaFields(server, "Photo")["camera2"]?["type"] as? String == "String")
        #expect(try server.request("GET", path).json["camera2"] as? String == "Leica")
    }

    @Test func photoPage_WithoutAppFields_IsTheStatementItWas() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let items = [(name: "limit", value: "20"), (name: "order", value: "-createdAt")]
        func served() throws -> String {
            ParseSQLCompiler.compile(try ParseAPI(application: server.application).findQuery("Photo", items: items))
                .select?.sql ?? ""
        }
        var fixed = try ParseQuery.find(.photo, items: items)
        fixed.access = .master
        #expect(try served() == ParseSQLCompiler.compile(fixed).select?.sql)
        let added = try server.json("PUT", "/parse/schemas/Photo", ["fields": ["rating": ["type": "Number"]]])
        #expect(added.status == 200, "\(added.text)")
        #expect(try served().contains("t.app_1"))
    }

    @Test func unknownFieldFromAUser_NeedsTheAddFieldPermission() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let alice = try server.makeUser("alice")
        // Built-in classes grant addField to no one by default: 119, and nothing is made.
        let refused = try server.json(
            "POST", "/parse/classes/Gallery", ["name": "g", "mood": "calm"], headers: alice.headers)
        #expect(refused.status == 400 && F.code(refused) == 119, "\(refused.text)")
        #expect(try server.scalar("select count(*) from galleries") == 0)
        #expect(try schemaFields(server, "Gallery")["mood"] == nil)
        #expect(
            (try server.request("GET", "/parse/schemas/Gallery").json["classLevelPermissions"] as? [String: Any])?[
                "addField"] as? [String: Bool] == [:])

        let granted = try server.json(
            "PUT", "/parse/schemas/Gallery", ["classLevelPermissions": ["addField": ["requiresAuthentication": true]]])
        #expect(granted.status == 200, "\(granted.text)")
        let made = try server.json(
            "POST", "/parse/classes/Gallery", ["name": "g", "mood": "calm"], headers: alice.headers)
        #expect(made.status == 201, "\(made.text)")
        let gallery = try #require(made.json["objectId"] as? String)
        let got = try server.request("GET", "/parse/classes/Gallery/\(gallery)", headers: alice.headers)
        #expect(got.json["mood"] as? String == "calm" && got.json["name"] as? String == "g", "\(got.text)")
        let wrong = try server.json(
            "PUT", "/parse/classes/Gallery/\(gallery)", ["mood": 3], headers: alice.headers)
        #expect(F.code(wrong) == 111, "\(wrong.text)")

        // A GalleryItem gains one too (the master key's save), and its move keeps working.
        let photo = try server.insertPhotos(1)[0]
        let item = try server.addedItem(gallery: gallery, photo: photo)
        let noted = try server.json("PUT", "/parse/classes/GalleryItem/\(item)", ["note": "first", "position": 0])
        #expect(noted.status == 200, "\(noted.text)")
        #expect(try server.request("GET", "/parse/classes/GalleryItem/\(item)").json["note"] as? String == "first")
    }
}
