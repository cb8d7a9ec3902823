import Foundation
import Testing

@testable import GalleryApp

/// What a LiveQuery `leave` tells a subscriber (issue #25, item 9): one who lost access to the row
/// (a gallery unshared from them) learns its objectId only, never its new name or ACL; a row that
/// merely stopped matching the query, still readable, is sent whole as before.
struct LiveQueryLeaveTests {
    private let encoder = ParseObjectEncoder(publicURL: "http://h", bucket: "b")

    private func gallery(name: String, acl: [String: Any], deleted: Bool = false) -> [String: Any] {
        [
            "object_id": "Gal0000001", "name": name, "owner_id": "aliceUser1", "acl": acl,
            "created_at": "2026-11-23T06:00:00.123+00:00", "updated_at": "2026-11-23T06:00:01+00:00",
            "deleted_at": deleted ? "2026-11-23T07:00:00+00:00" : NSNull(),
        ]
    }

    private func message(_ old: [String: Any], _ new: [String: Any], to user: String) throws -> [String: Any] {
        let matcher = try LiveQueryMatcher.compile([:], schema: .gallery)
        let subscription = LiveQuerySubscription(
            requestId: 7, schema: .gallery, matcher: matcher, keys: nil,
            access: ParseAccess(caller: .user(objectId: user)))
        let event = LiveQueryEvent(schema: .gallery, operation: .update, old: old, new: new)
        let text = try #require(
            subscription.message(for: event, rendering: LiveQueryRendering(event: event, encoder: encoder), clientId: 3)
        )
        return try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    @Test func leave_AfterLosingAccess_NamesTheObjectOnly() throws {
        let shared = gallery(
            name: "Holiday", acl: ["aliceUser1": ["read": true, "write": true], "bobUser001": ["read": true]])
        let unshared = gallery(name: "Surprise party for Bob", acl: ["aliceUser1": ["read": true, "write": true]])
        let sent = try message(shared, unshared, to: "bobUser001")
        #expect(sent["op"] as? String == "leave")
        #expect(sent["requestId"] as? Int == 7)
        #expect(sent["clientId"] as? Int == 3)
        let object = try #require(sent["object"] as? [String: Any])
        #expect(object as NSDictionary == ["className": "Gallery", "objectId": "Gal0000001"] as NSDictionary)
        #expect(sent["original"] == nil)
        let text = String(decoding: try JSONSerialization.data(withJSONObject: sent), as: UTF8.self)
        #expect(!text.contains("Surprise"))
        #expect(!text.contains("ACL"))

        // The owner, who still reads it, gets the update whole.
        let owner = try message(shared, unshared, to: "aliceUser1")
        #expect(owner["op"] as? String == "update")
        #expect((owner["object"] as? [String: Any])?["name"] as? String == "Surprise party for Bob")
    }

    @Test func leave_OfARowStillReadable_CarriesTheObjectAsBefore() throws {
        let acl: [String: Any] = ["aliceUser1": ["read": true, "write": true], "bobUser001": ["read": true]]
        // Trashed: it leaves the (default, live-only) query, and bob may still read it.
        let sent = try message(
            gallery(name: "Holiday", acl: acl), gallery(name: "Holiday", acl: acl, deleted: true), to: "bobUser001")
        #expect(sent["op"] as? String == "leave")
        #expect((sent["object"] as? [String: Any])?["name"] as? String == "Holiday")
        #expect((sent["original"] as? [String: Any])?["name"] as? String == "Holiday")
    }
}
