import Foundation
import Testing

@testable import GalleryApp

/// `userField:<pointer>` entries in `protectedFields` (issue 27 item 3), as Parse Server's
/// `filterSensitiveData` applies them: on the objects whose `_User` pointer names the caller, only
/// the intersection of the caller's hidden fields and the entry stays hidden; elsewhere, and for
/// callers without a session, the hidden fields stay hidden.
@Suite struct ProtectedUserFieldTests {
    private typealias F = ManifestFixtures

    @Test func revealingPointers_AreTheEntriesThatLeaveAHiddenFieldOut() throws {
        let permissions = try ClassLevelPermissions.parse(
            try ParseJSONParser.parse(
                Array(#"{"protectedFields":{"*":["a","b"],"userField:owner":["a"],"userField:editor":[]}}"#.utf8),
                maxDepth: 8))
        let hidden = permissions.hiddenFields(caller: .user(objectId: "userAAAAAA"), roles: [])
        #expect(hidden == ["a", "b"])  // a userField entry never adds to the hidden set
        let revealing = permissions.revealingPointers(hidden: hidden, caller: .user(objectId: "userAAAAAA"))
        #expect(revealing["a"] == ["editor"])
        #expect(revealing["b"] == ["editor", "owner"])
        #expect(permissions.revealingPointers(hidden: hidden, caller: .anonymous).isEmpty)
        #expect(ClassLevelPermissions.userFieldName("userField:owner") == "owner")
        #expect(ClassLevelPermissions.userFieldName("userField:") == nil)
        #expect(ClassLevelPermissions.userFieldName("owner") == nil)
    }

    @Test func userField_ShowsTheProtectedFieldsOnlyOnTheCallersOwnObjects() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let alice = try server.makeUser("alice")
        let bob = try server.makeUser("bob")
        let open: [String: Any] = ["*": true]
        let clp: [String: Any] = [
            "find": open, "get": open, "count": open, "create": open, "update": open, "delete": open,
            "protectedFields": ["*": ["phone", "secret"], "userField:owner": ["secret"]],
        ]
        let made = try server.json(
            "POST", "/parse/schemas/Profile",
            [
                "fields": [
                    "name": ["type": "String"], "phone": ["type": "String"], "secret": ["type": "String"],
                    "owner": ["type": "Pointer", "targetClass": "_User"],
                ],
                "classLevelPermissions": clp,
            ])
        #expect(made.status == 200, "\(made.text)")
        let shown = (made.json["classLevelPermissions"] as? [String: Any])?["protectedFields"] as? [String: [String]]
        #expect(shown?["userField:owner"] == ["secret"], "\(made.text)")
        func profile(_ name: String, _ owner: TestUser) throws -> String {
            let r = try server.json(
                "POST", "/parse/classes/Profile",
                [
                    "name": name, "phone": "555-\(name)", "secret": "s",
                    "owner": TestServer.pointer("_User", owner.objectId),
                ]
            )
            return try #require(r.json["objectId"] as? String, "\(r.text)")
        }
        let hers = try profile("alice", alice)
        let his = try profile("bob", bob)

        /// The fields among phone and secret each object shows `headers`' caller, by objectId,
        /// from a find, a find with `keys`, and a get (which must agree).
        func seen(_ headers: [String: String] = [:], anonymous: Bool = false) throws -> [String: Set<String>] {
            var byId: [String: Set<String>] = [:]
            let fields: Set<String> = ["phone", "secret"]
            for items in [[:], ["keys": "name,phone,secret"]] {
                let found = try F.find(server, items, className: "Profile", headers: headers, anonymous: anonymous)
                #expect(found.status == 200, "\(found.text)")
                for object in F.results(found) {
                    let id = object["objectId"] as? String ?? ""
                    let keys = fields.intersection(object.keys)
                    #expect(byId[id] == nil || byId[id] == keys, "\(items): \(found.text)")
                    byId[id] = keys
                }
            }
            for id in [hers, his] {
                let got = try server.request(
                    "GET", "/parse/classes/Profile/\(id)", headers: headers, anonymous: anonymous)
                #expect(fields.intersection(got.json.keys) == byId[id] ?? [], "\(got.text)")
            }
            return byId
        }
        #expect(try seen() == [hers: ["phone", "secret"], his: ["phone", "secret"]])  // the master key
        #expect(try seen(alice.headers) == [hers: ["phone"], his: []])
        #expect(try seen(bob.headers) == [hers: [], his: ["phone"]])
        #expect(try seen(anonymous: true) == [hers: [], his: []])
        let page = try F.find(
            server, ["where": F.json(["name": "alice"])], className: "Profile", headers: alice.headers)
        #expect(F.results(page).first?["phone"] as? String == "555-alice", "\(page.text)")

        // Still hidden from the caller as a class: querying it is 119, even on their own objects.
        let refused = try F.find(
            server, ["where": F.json(["phone": "555-alice"])], className: "Profile", headers: alice.headers)
        #expect(F.code(refused) == 119, "\(refused.text)")

        // A malformed userField key is 107 and changes nothing.
        for bad in ["userField:": ["phone"], "userField:1x": ["phone"], "userfield:owner": ["phone"]] as [String: Any] {
            var wrong = clp
            wrong["protectedFields"] = [bad.key: bad.value]
            let put = try server.json("PUT", "/parse/schemas/Profile", ["classLevelPermissions": wrong])
            #expect(F.code(put) == 107, "\(bad.key): \(put.text)")
        }
        #expect(try seen(alice.headers) == [hers: ["phone"], his: []])
    }

    @Test func userField_OnABuiltInClass_ShowsTheOwnerTheirOwnGalleriesNames() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let alice = try server.makeUser("alice")
        let bob = try server.makeUser("bob")
        let publicRead: [String: Any] = ["*": ["read": true]]
        let hers = try #require(
            try server.json(
                "POST", "/parse/classes/Gallery", ["name": "hers", "ACL": publicRead], headers: alice.headers
            )
            .json["objectId"] as? String)
        let his = try #require(
            try server.json("POST", "/parse/classes/Gallery", ["name": "his", "ACL": publicRead], headers: bob.headers)
                .json["objectId"] as? String)
        let put = try server.json(
            "PUT", "/parse/schemas/Gallery",
            ["classLevelPermissions": ["protectedFields": ["*": ["name"], "userField:owner": []]]])
        #expect(put.status == 200, "\(put.text)")
        let page = try F.find(server, ["order": "createdAt"], className: "Gallery", headers: alice.headers)
        let names = Dictionary(
            uniqueKeysWithValues: F.results(page).map { ($0["objectId"] as? String ?? "", $0["name"] as? String) })
        #expect(names.count == 2 && names[hers] == "hers" && names[his] == .some(nil), "\(page.text)")
        let got = try server.request("GET", "/parse/classes/Gallery/\(his)", headers: alice.headers)
        #expect(got.status == 200 && got.json["name"] == nil, "\(got.text)")
        // Without the userField entry the owner's own name is hidden too.
        let hiddenAll = try server.json(
            "PUT", "/parse/schemas/Gallery", ["classLevelPermissions": ["protectedFields": ["*": ["name"]]]])
        #expect(hiddenAll.status == 200, "\(hiddenAll.text)")
        let mine = try server.request("GET", "/parse/classes/Gallery/\(hers)", headers: alice.headers)
        #expect(mine.status == 200 && mine.json["name"] == nil, "\(mine.text)")
    }
}
