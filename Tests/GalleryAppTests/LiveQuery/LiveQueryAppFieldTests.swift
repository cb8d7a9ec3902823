import Foundation
import Testing

@testable import GalleryApp

/// LiveQuery and the fields of an app's own (issue 27, docs/decisions/045): a built-in class's
/// events carry them (their `app_<n>` columns are in the row), `_User` is a class one may
/// subscribe to (migration 0030: never a password hash in a payload), and a protected field comes
/// back on the rows that name the subscriber (`userField:` pointers, a `_User`'s own account), as
/// a find shows it.
@Suite struct LiveQueryAppFieldTests {
    private let encoder = ParseObjectEncoder(publicURL: "http://h", bucket: "b")

    private static let rating = CustomClass.Field(name: "rating", type: CustomFieldType(.number), column: "app_1")

    private func sent(_ subscription: LiveQuerySubscription, _ event: LiveQueryEvent) throws -> [String: Any]? {
        guard
            let text = subscription.message(
                for: event, rendering: LiveQueryRendering(event: event, encoder: encoder), clientId: 1)
        else { return nil }
        return try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
    }

    private static func photoRow(rating: Int) -> String {
        #"{"object_id":"Pho0000001","owner_id":"aliceUser1","filename":"a.jpg","deleted_at":null,"app_1":"#
            + "\(rating)"
            + #","created_at":"2026-11-23T06:00:00+00:00","updated_at":"2026-11-23T06:00:01+00:00"}"#
    }

    @Test func photoEvents_CarryTheAppFields_OfTheSchemaWithThem() throws {
        let schema = ParseClassSchema.photo.adding([Self.rating])
        let payload =
            #"{"className":"Photo","op":"update","old":"# + Self.photoRow(rating: 3) + #","new":"#
            + Self.photoRow(rating: 4) + "}"
        let subscription = LiveQuerySubscription(
            requestId: 1, schema: schema, matcher: try LiveQueryMatcher.compile(["rating": ["$gt": 2]], schema: schema),
            keys: nil, access: ParseAccess(caller: .user(objectId: "aliceUser1")))
        let event = try #require(
            LiveQueryEvent.decode(payload, appFields: { $0.className == "Photo" ? schema : $0 }).event)
        let message = try #require(try sent(subscription, event))
        #expect(message["op"] as? String == "update")
        #expect((message["object"] as? [String: Any])?["rating"] as? Int == 4, "\(message)")
        #expect((message["original"] as? [String: Any])?["rating"] as? Int == 3, "\(message)")
        // Decoded with the fixed schema (as before app fields reached LiveQuery), the value is lost.
        let fixed = try #require(LiveQueryEvent.decode(payload).event)
        #expect((try sent(subscription, fixed)?["object"] as? [String: Any])?["rating"] == nil)
    }

    @Test func protectedField_IsSentOnTheRowsThatNameTheSubscriber() throws {
        let note = CustomClass(
            className: "Note", tableId: 9,
            fields: [
                CustomClass.Field(name: "owner", type: CustomFieldType(.pointer, targetClass: "_User"), column: "c1"),
                CustomClass.Field(name: "secret", type: CustomFieldType(.string), column: "c2"),
            ], nextColumn: 3, permissions: ClassLevelPermissions(granting: ["*"]), indexes: [])
        var subscription = LiveQuerySubscription(
            requestId: 2, schema: note.schema, matcher: try LiveQueryMatcher.compile([:], schema: note.schema),
            keys: ["owner"], access: ParseAccess(caller: .user(objectId: "aliceUser1")))
        subscription.revealedBy = ["secret": ["c1"]]
        func created(owner: String) throws -> [String: Any]? {
            let payload =
                #"{"className":"Note","op":"insert","new":{"object_id":"n1","c1":""# + owner
                + #"","c2":"s","acl":null,"created_at":"2026-01-01T00:00:00+00:00","#
                + #""updated_at":"2026-01-01T00:00:00+00:00"}}"#
            let event = try #require(LiveQueryEvent.decode(payload, customClasses: { _ in note }).event)
            return try sent(subscription, event)?["object"] as? [String: Any]
        }
        #expect(try created(owner: "aliceUser1")?["secret"] as? String == "s")
        #expect(try created(owner: "bobUser0001")?["secret"] == nil)
        #expect(try created(owner: "bobUser0001")?["objectId"] as? String == "n1")
    }

    @Test func userEvents_ReadableAsAFindOfUser_NeverTheEmail() throws {
        let schema = ParseClassSchema.user.adding([
            CustomClass.Field(name: "displayName", type: CustomFieldType(.string), column: "app_1")
        ])
        let payload =
            #"{"className":"_User","op":"insert","new":{"object_id":"bobUser0001","username":"bob","#
            + #""email":"bob@example.org","app_1":"Bob","created_at":"2026-01-01T00:00:00+00:00","#
            + #""updated_at":"2026-01-01T00:00:00+00:00"}}"#
        let event = try #require(
            LiveQueryEvent.decode(payload, appFields: { $0.className == "_User" ? schema : $0 }).event)
        func object(_ access: ParseAccess) throws -> [String: Any]? {
            let subscription = LiveQuerySubscription(
                requestId: 3, schema: schema, matcher: try LiveQueryMatcher.compile([:], schema: schema), keys: nil,
                access: access)
            return try sent(subscription, event)?["object"] as? [String: Any]
        }
        let seen = try #require(try object(ParseAccess(caller: .user(objectId: "aliceUser1"))))
        #expect(seen["displayName"] as? String == "Bob" && seen["username"] as? String == "bob", "\(seen)")
        #expect(seen["email"] == nil && seen["className"] as? String == "_User")
        #expect(try object(ParseAccess(caller: .anonymous)) == nil)
        #expect(try object(ParseAccess(caller: .anonymous, publicRead: true))?["displayName"] as? String == "Bob")
    }

    @Test func endToEnd_AppFieldsProtectedFieldsAndUserEvents() throws {
        // Listening: a Python LiveQuery client connects over a WebSocket.
        let server = try TestServer(workers: 0, listening: true)
        defer { server.stop() }
        #expect(server.application.liveQuery.waitUntilListening(timeout: 10))
        let alice = try server.makeUser("alice")
        let bob = try server.makeUser("bob")
        try server.application.pool.query(
            "update users set email = username || '@example.org', password_hash = 'scrypt$secret-hash'")
        let photo = try server.insertPhotos(1, owner: alice.objectId)[0]
        let changes: [(String, [String: Any])] = [
            ("Photo", ["fields": ["rating": ["type": "Number"]]]),
            (
                "_User",
                [
                    "fields": ["displayName": ["type": "String"], "phone": ["type": "String"]],
                    "classLevelPermissions": ["protectedFields": ["*": ["phone"]]],
                ]
            ),
        ]
        for (className, body) in changes {
            let put = try server.json("PUT", "/parse/schemas/\(className)", body)
            #expect(put.status == 200, "\(put.text)")
        }
        let note = try server.json(
            "POST", "/parse/schemas/Note",
            [
                "fields": ["owner": ["type": "Pointer", "targetClass": "_User"], "secret": ["type": "String"]],
                "classLevelPermissions": [
                    "get": ["*": true], "find": ["*": true],
                    "protectedFields": ["*": ["secret"], "userField:owner": [String]()],
                ],
            ])
        #expect(note.status == 200, "\(note.text)")
        let run = try runLiveQueryScript(
            "live_query_app_fields_e2e.py",
            [
                server.baseURL, TestServer.appID, TestServer.masterKey, alice.token, alice.objectId, bob.objectId,
                photo,
            ])
        #expect(run.status == 0 && run.output.contains("\"ok\": true"), "\(run.output)")
    }
}
