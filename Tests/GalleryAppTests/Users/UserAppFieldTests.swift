import Foundation
import Testing

@testable import GalleryApp

/// Fields of an app's own on `_User` (issue 27, docs/decisions/045): defined through
/// `PUT /parse/schemas/_User` (or added by a save `addField` allows), set at sign-up as the Parse
/// Swift SDK sends a custom `ParseUser`'s properties and by `PUT /users/<id>`, and answered by
/// login, `me`, a get and a find; a wrong type is 111, a reserved name 105 or 136, `_User`'s
/// class-level permissions and `protectedFields` apply (a user sees their own account whole), and
/// no answer ever carries a password, its hash or another user's email.
@Suite struct UserAppFieldTests {
    private typealias F = ManifestFixtures
    private static let master = ["X-Parse-Master-Key": TestServer.masterKey]
    /// A class-level permission granted to no one but the master key.
    private static let nobody: [String: Bool] = [:]

    private func openServer() throws -> TestServer {
        try TestServer(workers: 0) { $0.signupOpen = true }
    }

    private func schemaFields(_ server: TestServer) throws -> [String: [String: Any]] {
        try server.request("GET", "/parse/schemas/_User").json["fields"] as? [String: [String: Any]] ?? [:]
    }

    private func signUp(_ server: TestServer, _ body: [String: Any], headers: [String: String] = [:]) throws
        -> TestServer.Response
    {
        try server.json("POST", "/parse/users", body, headers: headers)
    }

    private func userCount(_ server: TestServer) throws -> Int {
        try server.scalar("select count(*) from users")
    }

    @Test func appFields_AreSetAtSignUp_AnsweredByLoginMeGetAndFind_AndUpdated() throws {
        let server = try openServer()
        defer { server.stop() }
        // Before the app defines it, an anonymous sign-up naming a new field is refused (addField
        // is the master key's on built-in classes), and no account is made.
        let early = try signUp(server, ["username": "ann", "password": "pw", "displayName": "Ann"])
        #expect(early.status == 400 && F.code(early) == 119, "\(early.text)")
        #expect(try userCount(server) == 0 && schemaFields(server)["displayName"] == nil)

        let defined = try server.json(
            "PUT", "/parse/schemas/_User",
            ["fields": ["displayName": ["type": "String"], "age": ["type": "Number"], "prefs": ["type": "Object"]]])
        #expect(defined.status == 200, "\(defined.text)")
        let fields = try schemaFields(server)
        #expect(fields["displayName"]?["type"] as? String == "String" && fields["username"] != nil, "\(fields)")
        #expect(try server.request("GET", "/parse/schemas/_User").json["classLevelPermissions"] is [String: Any])

        // A wrong type is 111, a reserved name 105: no account either way.
        for (body, code): ([String: Any], Int) in [
            (["username": "ann", "password": "pw", "displayName": 5], 111),
            (["username": "ann", "password": "pw", "prefs": "dark"], 111),
            (["username": "ann", "password": "pw", "ACL": ["*": ["read": true]]], 105),
            (["username": "ann", "password": "pw", "emailVerified": true], 105),
        ] {
            let refused = try signUp(server, body)
            #expect(refused.status == 400 && F.code(refused) == code, "\(body): \(refused.text)")
        }
        #expect(try userCount(server) == 0)

        // The Parse Swift SDK's sign-up of a `ParseUser` with custom properties.
        let made = try signUp(
            server,
            [
                "username": "ann", "password": "correct horse", "email": "ann@example.org", "displayName": "Ann",
                "age": 30, "prefs": ["theme": "dark"],
            ])
        #expect(made.status == 201 && made.json["sessionToken"] is String, "\(made.text)")
        let ann = try #require(made.json["objectId"] as? String)
        let token = try #require(made.json["sessionToken"] as? String)
        let session = ["X-Parse-Session-Token": token]

        func check(_ response: TestServer.Response, displayName: String, age: Double, token expected: String?) {
            let object = response.json
            #expect(response.status == 200, "\(response.text)")
            #expect(object["objectId"] as? String == ann && object["username"] as? String == "ann")
            #expect(object["displayName"] as? String == displayName && object["age"] as? Double == age, "\(object)")
            #expect((object["prefs"] as? [String: Any])?["theme"] as? String == "dark", "\(object)")
            #expect(object["email"] as? String == "ann@example.org")
            #expect(object["sessionToken"] as? String == expected, "\(object)")
            #expect(!response.text.contains("password") && !response.text.contains("scrypt"), "\(response.text)")
        }
        let query = "username=ann&password=correct%20horse"
        let logIn = try server.request("GET", "/parse/login?\(query)")
        check(logIn, displayName: "Ann", age: 30, token: logIn.json["sessionToken"] as? String)
        #expect(logIn.json["sessionToken"] is String)
        let posted = try server.json("POST", "/parse/login", ["username": "ann", "password": "correct horse"])
        check(posted, displayName: "Ann", age: 30, token: posted.json["sessionToken"] as? String)
        check(try server.request("GET", "/parse/users/me", headers: session), displayName: "Ann", age: 30, token: token)
        check(
            try server.request("GET", "/parse/users/\(ann)", headers: session), displayName: "Ann", age: 30, token: nil)
        let keyed = try server.request("GET", "/parse/users/\(ann)?keys=displayName", headers: session).json
        #expect(keyed["displayName"] as? String == "Ann" && keyed["age"] == nil, "\(keyed)")

        // PUT /users/<id>: app fields with their operations, with and without account fields.
        let renamed = try server.json(
            "PUT", "/parse/users/\(ann)",
            ["displayName": "Annie", "age": ["__op": "Increment", "amount": 1]], headers: session)
        #expect(renamed.status == 200 && renamed.json["updatedAt"] is String, "\(renamed.text)")
        check(
            try server.request("GET", "/parse/users/me", headers: session), displayName: "Annie", age: 31, token: token)
        let both = try server.json(
            "PUT", "/parse/users/\(ann)", ["email": "annie@example.org", "age": 32], headers: session)
        #expect(both.status == 200, "\(both.text)")
        let me = try server.request("GET", "/parse/users/me", headers: session).json
        #expect(me["email"] as? String == "annie@example.org" && me["age"] as? Double == 32, "\(me)")

        // Refused updates change nothing: a wrong type (111), a field the class lacks from a user
        // (119, and it is not added), a reserved name (105).
        for (body, code): ([String: Any], Int) in [
            (["age": "old"], 111), (["displayName": "X", "age": "old"], 111), (["mood": "calm"], 119),
            (["isAdmin": true], 105), (["sessionToken": "r:x"], 105),
        ] {
            let refused = try server.json("PUT", "/parse/users/\(ann)", body, headers: session)
            #expect(refused.status == 400 && F.code(refused) == code, "\(body): \(refused.text)")
        }
        let after = try server.request("GET", "/parse/users/me", headers: session).json
        #expect(after["displayName"] as? String == "Annie" && after["age"] as? Double == 32, "\(after)")
        #expect(try schemaFields(server)["mood"] == nil)

        // Find: where, order and keys on app fields, as on any class; no email but one's own.
        let bob = try signUp(server, ["username": "bob", "password": "pw", "email": "bob@example.org", "age": 20])
        let bobSession = ["X-Parse-Session-Token": try #require(bob.json["sessionToken"] as? String, "\(bob.text)")]
        let found = try server.request(
            "GET", "/parse/users?" + F.query(["where": F.json(["age": ["$gt": 25]]), "keys": "displayName,age"]),
            headers: bobSession)
        #expect(F.ids(found) == [ann], "\(found.text)")
        #expect(F.results(found).first?["displayName"] as? String == "Annie" && F.results(found).first?["email"] == nil)
        let ordered = try server.request("GET", "/parse/users?order=age", headers: bobSession)
        #expect(F.results(ordered).compactMap { $0["age"] as? Double } == [20, 32], "\(ordered.text)")
        #expect(!ordered.text.contains("annie@example.org") && ordered.text.contains("bob@example.org"))

        // The master key's sign-up adds the field it names, typed by its value.
        let byMaster = try signUp(
            server, ["username": "cy", "password": "pw", "nickname": "C"], headers: Self.master)
        #expect(byMaster.status == 201, "\(byMaster.text)")
        #expect(try schemaFields(server)["nickname"]?["type"] as? String == "String")
    }

    @Test func userSchema_KeepsItsFixedAndReservedFields() throws {
        let server = try openServer()
        defer { server.stop() }
        for (body, code): ([String: Any], Int) in [
            (["fields": ["username": ["__op": "Delete"]]], 136),
            (["fields": ["email": ["type": "Number"]]], 255),
            (["fields": ["password": ["type": "String"]]], 136),
            (["fields": ["authData": ["type": "Object"]]], 136),
            (["fields": ["sessionToken": ["type": "String"]]], 136),
            (["fields": ["friends": ["type": "Relation", "targetClass": "_User"]]], 119),
            (["fields": ["nick": ["type": "String"], "isAdmin": ["type": "Boolean"]]], 136),
            (["classLevelPermissions": ["readUserFields": ["owner"]]], 107),
        ] {
            let refused = try server.json("PUT", "/parse/schemas/_User", body)
            #expect(refused.status == 400 && F.code(refused) == code, "\(body): \(refused.text)")
        }
        let fields = try schemaFields(server)
        #expect(fields["nick"] == nil && fields["password"] == nil && fields["username"] != nil, "\(fields)")
        // Not a class an app may drop or make.
        #expect(F.code(try server.request("DELETE", "/parse/schemas/_User")) == 103)
        #expect(F.code(try server.json("POST", "/parse/schemas/_User", ["className": "_User"])) == 103)
    }

    @Test func userPermissions_AndProtectedFields_ApplyToEveryoneButTheAccountItself() throws {
        let server = try openServer()
        defer { server.stop() }
        let put = try server.json(
            "PUT", "/parse/schemas/_User",
            [
                "fields": ["phone": ["type": "String"], "city": ["type": "String"]],
                "classLevelPermissions": ["protectedFields": ["*": ["phone"]]],
            ])
        #expect(put.status == 200, "\(put.text)")
        let ann = try signUp(server, ["username": "ann", "password": "pw", "phone": "555-1", "city": "Oslo"])
        let bob = try signUp(server, ["username": "bob", "password": "pw", "phone": "555-2", "city": "Rome"])
        let annId = try #require(ann.json["objectId"] as? String, "\(ann.text)")
        let bobId = try #require(bob.json["objectId"] as? String, "\(bob.text)")
        let bobSession = ["X-Parse-Session-Token": try #require(bob.json["sessionToken"] as? String)]

        // A find: bob sees ann's city but not her phone, and his own phone.
        let found = try server.request("GET", "/parse/users?order=username", headers: bobSession)
        let rows = F.results(found)
        #expect(rows.map { $0["city"] as? String } == ["Oslo", "Rome"], "\(found.text)")
        #expect(rows.map { $0["phone"] as? String } == [nil, "555-2"], "\(found.text)")
        #expect(!found.text.contains("555-1"))
        // A where or order on it is 119 (it would tell the phone), even for one's own.
        for items in [["where": F.json(["phone": "555-1"])], ["order": "phone"]] {
            let refused = try server.request("GET", "/parse/users?" + F.query(items), headers: bobSession)
            #expect(refused.status == 400 && F.code(refused) == 119, "\(items): \(refused.text)")
        }
        // One's own account whole, by get, me and login; the master key sees every phone.
        #expect(
            try server.request("GET", "/parse/users/\(bobId)", headers: bobSession).json["phone"] as? String == "555-2")
        #expect(try server.request("GET", "/parse/users/me", headers: bobSession).json["phone"] as? String == "555-2")
        #expect(try server.request("GET", "/parse/login?username=bob&password=pw").json["phone"] as? String == "555-2")
        let all = try server.request("GET", "/parse/users?order=username", headers: Self.master)
        #expect(F.results(all).map { $0["phone"] as? String } == ["555-1", "555-2"], "\(all.text)")

        // find and get closed to all but the master key: 119 for a user; `me` still answers.
        let closed = try server.json(
            "PUT", "/parse/schemas/_User",
            ["classLevelPermissions": ["find": Self.nobody, "get": Self.nobody, "update": Self.nobody]])
        #expect(closed.status == 200, "\(closed.text)")
        #expect(F.code(try server.request("GET", "/parse/users", headers: bobSession)) == 119)
        #expect(F.code(try server.request("GET", "/parse/users/\(bobId)", headers: bobSession)) == 119)
        #expect(F.code(try server.json("PUT", "/parse/users/\(bobId)", ["city": "Pisa"], headers: bobSession)) == 119)
        #expect(try server.request("GET", "/parse/users/me", headers: bobSession).json["city"] as? String == "Rome")
        #expect(
            F.ids(try server.request("GET", "/parse/users", headers: Self.master)).sorted() == [annId, bobId].sorted())
    }

    @Test func signUp_ClosedToItsCaller_AddsNoField() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        // addField open to everyone but sign-up closed (the default): refused before any column is made.
        let open = try server.json(
            "PUT", "/parse/schemas/_User", ["classLevelPermissions": ["addField": ["*": true]]])
        #expect(open.status == 200, "\(open.text)")
        let refused = try signUp(server, ["username": "ann", "password": "pw", "mood": "calm"])
        #expect(refused.status == 400 && F.code(refused) == 119, "\(refused.text)")
        #expect(try schemaFields(server)["mood"] == nil && userCount(server) == 0)
        // And `create` closed on `_User` refuses a sign-up even where sign-up is open.
        let server2 = try openServer()
        defer { server2.stop() }
        #expect(
            try server2.json("PUT", "/parse/schemas/_User", ["classLevelPermissions": ["create": Self.nobody]]).status
                == 200)
        let closed = try signUp(server2, ["username": "ann", "password": "pw"])
        #expect(closed.status == 400 && F.code(closed) == 119, "\(closed.text)")
        #expect(try userCount(server2) == 0)
    }
}
