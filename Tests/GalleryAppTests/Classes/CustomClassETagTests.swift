import Foundation
import Testing

@testable import GalleryApp

/// Custom-class finds have ETags and kept answers, as Photo's (migration 0025): a repeated page is
/// a 304 or a kept body; any write to the class, and any change of its schema or class-level
/// permissions, moves the tag, so a caller the new permissions refuse gets 119, never a kept answer.
struct CustomClassETagTests {
    private static let path = "/parse/classes/Note?order=-createdAt&limit=20"

    /// A find's answer once the change sequences are known (answers carry no tag before).
    private func tagged(_ server: TestServer, _ headers: [String: String]) throws -> TestServer.Response {
        for _ in 0..<200 {
            let response = try server.request("GET", Self.path, headers: headers)
            if response.status != 200 || response.header("ETag") != nil { return response }
            Thread.sleep(forTimeInterval: 0.05)
        }
        throw TestSetupError(description: "no ETag")
    }

    private func revalidate(_ server: TestServer, _ headers: [String: String], _ tag: String) throws
        -> TestServer.Response
    {
        try server.request("GET", Self.path, headers: headers.merging(["If-None-Match": tag]) { $1 })
    }

    @Test func customFind_IsTagged_AndMovesWithWritesAndPermissions() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let alice = try server.makeUser("alice")
        let bob = try server.makeUser("bob")
        let made = try server.json(
            "POST", "/parse/schemas/Note",
            [
                "fields": ["text": ["type": "String"]],
                "classLevelPermissions": ["find": [alice.objectId: true], "get": [alice.objectId: true]],
            ])
        #expect(made.status == 200, "\(made.text)")
        for text in ["one", "two"] {
            #expect(try server.json("POST", "/parse/classes/Note", ["text": text]).status == 201)
        }

        // Tagged, 304 for the tag, and the same body again (a kept answer).
        let first = try tagged(server, alice.headers)
        let tag = try #require(first.header("ETag"), "\(first.status) \(first.text)")
        #expect((first.json["results"] as? [Any])?.count == 2)
        #expect(try revalidate(server, alice.headers, tag).status == 304)
        let again = try server.request("GET", Self.path, headers: alice.headers)
        #expect(again.body == first.body && again.header("ETag") == tag)
        // Another caller's answer is not alice's: bob may not find.
        #expect(try revalidate(server, bob.headers, tag).json["code"] as? Int == 119)

        // A write to the class moves the tag.
        #expect(try server.json("POST", "/parse/classes/Note", ["text": "three"]).status == 201)
        let afterWrite = try revalidate(server, alice.headers, tag)
        #expect(afterWrite.status == 200 && (afterWrite.json["results"] as? [Any])?.count == 3, "\(afterWrite.text)")
        let writeTag = try #require(afterWrite.header("ETag"))
        #expect(writeTag != tag)

        // A row written by another process (straight SQL) moves it too, through the triggers.
        let table = try #require(
            try server.application.pool.query(
                "select table_id from custom_classes where class_name = 'Note'"
            ).first?.decode(Int64.self, 0))
        try server.application.pool.query("update custom_\(table) set updated_at = now()")
        var moved = false
        for _ in 0..<200 where !moved {
            moved = try revalidate(server, alice.headers, writeTag).status == 200
            if !moved { Thread.sleep(forTimeInterval: 0.05) }
        }
        #expect(moved)

        // New permissions: alice's kept answer and tag are no longer hers.
        let current = try #require(try tagged(server, alice.headers).header("ETag"))
        #expect(try revalidate(server, alice.headers, current).status == 304)
        #expect(
            try server.json("PUT", "/parse/schemas/Note", ["classLevelPermissions": ["find": [bob.objectId: true]]])
                .status == 200)
        let refused = try revalidate(server, alice.headers, current)
        #expect(refused.json["code"] as? Int == 119, "\(refused.status) \(refused.text)")
        #expect(try server.request("GET", Self.path, headers: alice.headers).json["code"] as? Int == 119)
        #expect((try tagged(server, bob.headers).json["results"] as? [Any])?.count == 3)
    }
}
