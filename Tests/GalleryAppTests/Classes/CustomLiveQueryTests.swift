import Foundation
import Testing

@testable import GalleryApp

/// LiveQuery on custom classes: their rows are announced (migration 0025), a subscription needs
/// the class's `find` permission, and each event is checked against the permissions as they are.
struct CustomLiveQueryTests {
    @Test func endToEnd_SubscriberSeesCreateUpdateLeaveEnterDelete_AndTheRefusedOneNothing() throws {
        // Listening: a Python LiveQuery client connects over a WebSocket.
        let server = try TestServer(workers: 1, listening: true)
        defer { server.stop() }
        #expect(server.application.liveQuery.waitUntilListening(timeout: 10))
        let alice = try server.makeUser("alice")
        let bob = try server.makeUser("bob")
        let made = try server.json(
            "POST", "/parse/schemas/Note",
            [
                "fields": ["text": ["type": "String"], "score": ["type": "Number"]],
                "classLevelPermissions": ["find": [alice.objectId: true]],
            ])
        #expect(made.status == 200, "\(made.text)")
        let run = try runLiveQueryScript(
            "live_query_custom_e2e.py",
            [server.baseURL, TestServer.appID, TestServer.masterKey, alice.token, bob.token])
        #expect(run.status == 0 && run.output.contains("\"ok\": true"), "\(run.output)")
    }

    @Test func events_FollowTheClassLevelPermissionsOfTheMoment() throws {
        let open = CustomClass(
            className: "Note", tableId: 9,
            fields: [CustomClass.Field(name: "score", type: CustomFieldType(.number), column: "c1")], nextColumn: 2,
            permissions: ClassLevelPermissions(granting: ["*"]), indexes: [])
        var current = open
        let payload =
            #"{"className":"Note","op":"insert","new":{"object_id":"n1","c1":2,"acl":null,"#
            + #""created_at":"2026-01-01T00:00:00+00:00","updated_at":"2026-01-01T00:00:00+00:00"}}"#
        let user = ParseAccess(caller: .user(objectId: "u1"))
        let subscription = LiveQuerySubscription(
            requestId: 1, schema: open.schema,
            matcher: try LiveQueryMatcher.compile(["score": ["$gt": 1]], schema: open.schema), keys: nil, access: user)
        func op() -> String? {
            guard let event = LiveQueryEvent.decode(payload, customClasses: { $0 == "Note" ? current : nil }).event
            else { return "undecoded" }
            return subscription.operation(for: event)
        }
        #expect(op() == "create")
        // Closed to everyone but the master key: the same row is no longer sent.
        current = open.with(permissions: .masterOnly)
        #expect(op() == nil)
        // A class this server does not know: the event is skipped, not misread.
        #expect(LiveQueryEvent.decode(payload).event == nil)
    }
}
