import Foundation
import Testing

@testable import GalleryApp

/// An `include` shows no more than a get of the included object would (docs/decisions/046): the
/// target class's pointer permissions (`readUserFields`) leave out the objects that do not point
/// to the caller, its `protectedFields` leave out fields, and a refused `get` is 119, for fetched
/// includes (custom classes) and for the pointers built-in classes join into the page.
@Suite struct IncludeAccessTests {
    private typealias F = ManifestFixtures

    private func created(_ response: TestServer.Response) throws -> String {
        try #require(response.status == 201 ? response.json["objectId"] as? String : nil, "\(response.text)")
    }

    /// The included object of `field` in every result of a find of `className` (nil where none).
    private func included(_ response: TestServer.Response, _ field: String) -> [String: [String: Any]] {
        var objects: [String: [String: Any]] = [:]
        for result in F.results(response) {
            guard let id = result["objectId"] as? String, let object = result[field] as? [String: Any],
                object["__type"] as? String == "Object"
            else { continue }
            objects[id] = object
        }
        return objects
    }

    @Test func include_OfAClassReadThroughPointerPermissions_ShowsOnlyWhatAGetShows() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let alice = try server.makeUser("alice")
        let bob = try server.makeUser("bob")
        let open: [String: Any] = ["find": ["*": true], "get": ["*": true], "count": ["*": true]]
        let diaryCLP: [String: Any] = ["find": [String: Any](), "get": [String: Any](), "readUserFields": ["owner"]]
        for (name, fields, clp) in [
            ("Diary", ["owner": ["type": "Pointer", "targetClass": "_User"], "note": ["type": "String"]], diaryCLP),
            ("Comment", ["diary": ["type": "Pointer", "targetClass": "Diary"], "text": ["type": "String"]], open),
        ] as [(String, [String: Any], [String: Any])] {
            let made = try server.json(
                "POST", "/parse/schemas/\(name)", ["fields": fields, "classLevelPermissions": clp])
            #expect(made.status == 200, "\(made.text)")
        }
        func diary(_ user: TestUser, _ note: String) throws -> String {
            try created(
                try server.json(
                    "POST", "/parse/classes/Diary",
                    ["owner": TestServer.pointer("_User", user.objectId), "note": note]))
        }
        let alices = try diary(alice, "alice-secret-note")
        let bobs = try diary(bob, "bob-note")
        let onAlices = try created(
            try server.json("POST", "/parse/classes/Comment", ["diary": TestServer.pointer("Diary", alices)]))
        let onBobs = try created(
            try server.json("POST", "/parse/classes/Comment", ["diary": TestServer.pointer("Diary", bobs)]))

        // A get of alice's diary is 101 for bob: the include must not show it either.
        #expect(F.code(try server.request("GET", "/parse/classes/Diary/\(alices)", headers: bob.headers)) == 101)
        let found = try F.find(server, ["include": "diary"], className: "Comment", headers: bob.headers)
        #expect(found.status == 200, "\(found.text)")
        #expect(F.ids(found).count == 2, "\(found.text)")
        #expect(included(found, "diary")[onBobs]?["note"] as? String == "bob-note", "\(found.text)")
        #expect(included(found, "diary")[onAlices] == nil && !found.text.contains("alice-secret"), "\(found.text)")
        let got = try server.request(
            "GET", "/parse/classes/Comment/\(onAlices)?include=diary", headers: bob.headers)
        #expect(got.status == 200 && !got.text.contains("alice-secret"), "\(got.text)")
        let mine = try server.request(
            "GET", "/parse/classes/Comment/\(onAlices)?include=diary", headers: alice.headers)
        #expect((mine.json["diary"] as? [String: Any])?["note"] as? String == "alice-secret-note", "\(mine.text)")
        // Without a session no pointer names the caller: nothing included.
        let anonymous = try F.find(server, ["include": "diary"], className: "Comment", anonymous: true)
        #expect(
            anonymous.status == 200 && included(anonymous, "diary").isEmpty && !anonymous.text.contains("note"),
            "\(anonymous.text)")
        #expect(included(try F.find(server, ["include": "diary"], className: "Comment"), "diary").count == 2)

        // The class's get refused outright: an include of it is refused, as a get of it is.
        #expect(
            try server.json(
                "PUT", "/parse/schemas/Diary",
                ["classLevelPermissions": ["get": [String: Any](), "readUserFields": [String]()]]
            ).status == 200)
        let refused = try F.find(server, ["include": "diary"], className: "Comment", headers: alice.headers)
        #expect(F.code(refused) == 119 && !refused.text.contains("note"), "\(refused.text)")
    }

    @Test func joinedInclude_OfABuiltInClass_FollowsItsClassLevelPermissions() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let alice = try server.makeUser("alice")
        let gallery = try created(
            try server.json("POST", "/parse/classes/Gallery", ["name": "hidden-name"], headers: alice.headers))
        let photo = try server.insertPhotos(1, owner: alice.objectId)[0]
        let item = try created(
            try server.json(
                "POST", "/parse/classes/GalleryItem",
                ["gallery": TestServer.pointer("Gallery", gallery), "photo": TestServer.pointer("Photo", photo)],
                headers: alice.headers))
        func items(_ include: String) throws -> TestServer.Response {
            try F.find(server, ["include": include], className: "GalleryItem", headers: alice.headers)
        }
        #expect(included(try items("gallery"), "gallery")[item]?["name"] as? String == "hidden-name")

        // protectedFields: neither a get nor the joined include shows the name.
        #expect(
            try server.json(
                "PUT", "/parse/schemas/Gallery", ["classLevelPermissions": ["protectedFields": ["*": ["name"]]]]
            ).status == 200)
        let got = try server.request("GET", "/parse/classes/Gallery/\(gallery)", headers: alice.headers)
        #expect(got.status == 200 && got.json["name"] == nil, "\(got.text)")
        let hidden = try items("gallery")
        #expect(hidden.status == 200, "\(hidden.text)")
        #expect(included(hidden, "gallery")[item] != nil && !hidden.text.contains("hidden-name"), "\(hidden.text)")
        let withPhoto = try items("gallery,photo")
        #expect(included(withPhoto, "photo")[item]?["objectId"] as? String == photo, "\(withPhoto.text)")
        #expect(!withPhoto.text.contains("hidden-name"), "\(withPhoto.text)")
        let keyed = try F.find(
            server, ["keys": "gallery.name,position"], className: "GalleryItem", headers: alice.headers)
        #expect(!keyed.text.contains("hidden-name"), "\(keyed.text)")

        // A refused get: 119 for a get and for the include; the master key still reads both.
        #expect(
            try server.json(
                "PUT", "/parse/schemas/Photo", ["classLevelPermissions": ["get": [String: Any]()]]
            ).status == 200)
        #expect(F.code(try server.request("GET", "/parse/classes/Photo/\(photo)", headers: alice.headers)) == 119)
        #expect(F.code(try items("photo")) == 119)
        #expect(included(try F.find(server, ["include": "photo"], className: "GalleryItem"), "photo")[item] != nil)
    }
}
