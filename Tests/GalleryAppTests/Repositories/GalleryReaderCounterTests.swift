import Foundation
import Postgres
import Synchronization
import Testing

@testable import GalleryApp

/// A user's Gallery count in O(1) (migrations/0015): the public galleries' counter plus the user's
/// `galleries_readable` counter, read instead of counting rows, and right after every change that
/// moves a gallery in or out of what a user may read: create, share and unshare, make public,
/// trash, restore, purge, deleting a grantee or an owner, statements over many rows, the upgrade's
/// owner assignment, and concurrent creates.
@Suite(.serialized) struct GalleryReaderCounterTests {
    private typealias F = ManifestFixtures

    private func create(_ server: TestServer, _ name: String, acl: [String: Any]? = nil, _ user: TestUser) throws
        -> String
    {
        var body: [String: Any] = ["name": name]
        if let acl { body["ACL"] = acl }
        let r = try server.json("POST", "/parse/classes/Gallery", body, headers: user.headers)
        return try #require(r.json["objectId"] as? String, "create failed: \(r.status) \(r.text)")
    }

    private func count(_ server: TestServer, _ headers: [String: String]) throws -> Int? {
        try F.find(server, ["count": "1", "limit": "0"], className: "Gallery", headers: headers).json["count"] as? Int
    }

    /// The count each caller gets equals the galleries a find shows it (the find's filter is the
    /// access filter, which no counter feeds) and the rows SQL counts by the same rule.
    private func expectCountsMatch(
        _ server: TestServer, _ users: [TestUser], _ step: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        // Some steps write in SQL, not through this server: re-read the change sequences as a write
        // through the server does, so the manifest cache cannot answer with the page from before.
        try server.application.classChanges.refresh()
        for user in users {
            let listed = F.ids(try F.find(server, ["limit": "1000"], className: "Gallery", headers: user.headers)).count
            let counted = try count(server, user.headers)
            let rows = try server.application.pool.query(
                """
                select count(*) from galleries where deleted_at is null and (owner_id = $1::text
                    or acl @> jsonb_build_object($1::text, '{"read":true}'::jsonb) or acl @> '{"*":{"read":true}}')
                """, [user.objectId]
            ).first!.decode(Int64.self, 0)
            #expect(
                counted == listed && Int64(listed) == rows,
                "\(step): user count \(String(describing: counted)), find \(listed), rows \(rows)",
                sourceLocation: sourceLocation)
        }
    }

    @Test func userCount_ReadsTheCounters_NotTheTable() throws {
        // No manifest cache: the counters are moved by hand below, which moves no change sequence,
        // so a kept count would (rightly) still be served.
        let server = try TestServer(workers: 0) { $0.manifestCacheBytes = 0 }
        defer { server.stop() }
        let alice = try server.makeUser("alice")
        let bob = try server.makeUser("bob")
        _ = try create(server, "Mine", alice)
        _ = try create(server, "Public", acl: ["*": ["read": true]], bob)
        #expect(try count(server, alice.headers) == 2)

        // The statement a count with a session runs touches only the counters: its plan reads no galleries.
        var query = try ParseQuery.find(.gallery, items: [("count", "1"), ("limit", "0")])
        query.access = ParseAccess(caller: .user(objectId: alice.objectId))
        let statement = try #require(ParseSQLCompiler.compile(query).count)
        let plan = try server.application.pool.query(
            "explain (format json) " + statement.sql, statement.binds.postgresBinds
        )
        .first!.decode(String.self, 0)
        #expect(plan.contains("\"row_counts\"") && plan.contains("\"owner_row_counts\""), "\(plan)")
        #expect(!plan.contains("\"galleries\""), "the count scans galleries: \(plan)")

        // And the answer is the counters': moved by hand, the API's count moves with them.
        let pool = server.application.pool
        try pool.query(
            "update owner_row_counts set n = n + 40 where owner_id = $1 and name = 'galleries_readable'",
            [alice.objectId])
        try pool.query("update row_counts set n = n + 2 where name = 'galleries_public_live'")
        #expect(try count(server, alice.headers) == 44)
        #expect(
            try count(server, bob.headers) == 3,
            "bob has no counter row of his own (his one gallery is public): the public ones alone")
        try pool.query(
            "update owner_row_counts set n = n - 40 where owner_id = $1 and name = 'galleries_readable'",
            [alice.objectId])
        try pool.query("update row_counts set n = n - 2 where name = 'galleries_public_live'")
        try expectCountsMatch(server, [alice, bob], "counters put back")
        // A condition counts rows, as before.
        let filtered = try F.find(
            server, ["count": "1", "limit": "0", "where": F.json(["name": "Mine"])], className: "Gallery",
            headers: alice.headers)
        #expect(filtered.json["count"] as? Int == 1)
    }

    @Test func counts_StayRight_AcrossSharingTrashRestorePurgeAndDeletedUsers() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let master = ["X-Parse-Master-Key": TestServer.masterKey]
        let alice = try server.makeUser("alice")
        let bob = try server.makeUser("bob")
        let carol = try server.makeUser("carol")
        let everyone = [alice, bob, carol]
        let own = try create(server, "Own", alice)
        let shared = try create(
            server, "Shared", acl: [alice.objectId: ["read": true, "write": true], bob.objectId: ["read": true]], alice)
        let open = try create(server, "Open", acl: ["*": ["read": true]], alice)
        let bobs = try create(server, "Bob's", acl: [alice.objectId: ["read": true, "write": true]], bob)
        // Public and granted at once (counted once), and a grant of write alone (no read: not counted).
        let carols = try create(server, "Carol's", acl: ["*": ["read": true], alice.objectId: ["read": true]], carol)
        _ = try create(server, "Write only", acl: [bob.objectId: ["write": true]], carol)
        try expectCountsMatch(server, everyone, "created")
        #expect(
            try count(server, alice.headers) == 5 && count(server, bob.headers) == 4
                && count(server, carol.headers) == 3)

        func put(_ id: String, _ body: [String: Any], _ user: TestUser) throws {
            let r = try server.json("PUT", "/parse/classes/Gallery/\(id)", body, headers: user.headers)
            #expect(r.status == 200, "\(r.text)")
        }
        try put(shared, ["ACL": [:] as [String: Any]], alice)
        try expectCountsMatch(server, everyone, "unshared")
        try put(own, ["ACL": ["*": ["read": true]]], alice)
        try expectCountsMatch(server, everyone, "made public")
        try put(open, ["ACL": [carol.objectId: ["read": true]]], alice)
        try expectCountsMatch(server, everyone, "public to one user")
        try put(open, ["name": "Renamed"], alice)
        try expectCountsMatch(server, everyone, "renamed (no reader changes)")

        for id in [own, open, shared] {
            #expect(try server.request("DELETE", "/parse/classes/Gallery/\(id)", headers: alice.headers).status == 200)
        }
        try expectCountsMatch(server, everyone, "trashed")
        #expect(try server.request("DELETE", "/parse/classes/Gallery/\(own)", headers: alice.headers).status == 200)
        try expectCountsMatch(server, everyone, "trashed again (a no-op)")
        try put(own, ["deletedAt": ["__op": "Delete"]], alice)
        try put(open, ["deletedAt": ["__op": "Delete"]], alice)
        try expectCountsMatch(server, everyone, "restored")
        #expect(try server.request("DELETE", "/parse/purge/Gallery/\(shared)", headers: alice.headers).status == 200)
        try expectCountsMatch(server, everyone, "purged")

        // A grantee deleted: their counter goes with them, and later changes to galleries that
        // still name them skip them (no counter row to recreate for a user who is gone).
        let grant = try create(server, "For carol", acl: [carol.objectId: ["read": true]], alice)
        #expect(try server.request("DELETE", "/parse/classes/Gallery/\(carols)", headers: carol.headers).status == 200)
        #expect(try server.request("DELETE", "/parse/purge/Gallery/\(carols)", headers: carol.headers).status == 200)
        try server.application.pool.query("delete from galleries where owner_id = $1", [carol.objectId])
        let deleteCarol = try server.request("DELETE", "/parse/users/\(carol.objectId)", headers: master)
        #expect(deleteCarol.status == 200, "\(deleteCarol.text)")
        #expect(try server.request("DELETE", "/parse/classes/Gallery/\(grant)", headers: alice.headers).status == 200)
        #expect(try server.request("DELETE", "/parse/purge/Gallery/\(grant)", headers: alice.headers).status == 200)
        let carolRows = try server.application.pool.query(
            "select count(*) from owner_row_counts where owner_id = $1", [carol.objectId]
        )
        .first!.decode(Int64.self, 0)
        #expect(carolRows == 0)
        try expectCountsMatch(server, [alice, bob], "a grantee deleted")

        // An owner deleted once their galleries are gone: the grantees' counts lose them first.
        #expect(try server.request("DELETE", "/parse/classes/Gallery/\(bobs)", headers: bob.headers).status == 200)
        #expect(try server.request("DELETE", "/parse/purge/Gallery/\(bobs)", headers: bob.headers).status == 200)
        #expect(try server.request("DELETE", "/parse/users/\(bob.objectId)", headers: master).status == 200)
        try expectCountsMatch(server, [alice], "an owner deleted")

        // Statements over many rows (counted per statement): 300 galleries of mixed owners and ACLs.
        let dave = try server.makeUser("dave")
        try server.application.pool.query(
            """
            insert into galleries (object_id, name, owner_id, acl, deleted_at)
            select 'bulk' || lpad(i::text, 6, '0'), 'Bulk ' || i, case when i % 2 = 0 then $1 else $2 end,
                   case i % 5 when 0 then '{"*":{"read":true}}'::jsonb when 1 then jsonb_build_object($2::text, '{"read":true}'::jsonb)
                               when 2 then jsonb_build_object($1::text, '{"read":true}'::jsonb, $2::text, '{"read":true}'::jsonb) end,
                   case when i % 7 = 0 then now() end
              from generate_series(1, 300) i
            """, [alice.objectId, dave.objectId])
        try expectCountsMatch(server, [alice, dave], "bulk insert")
        try server.application.pool.query(
            "update galleries set deleted_at = now() where object_id like 'bulk%' and object_id < 'bulk000100'")
        try expectCountsMatch(server, [alice, dave], "bulk trash")
        try server.application.pool.query(
            "delete from galleries where object_id like 'bulk%' and object_id > 'bulk000050'")
        try expectCountsMatch(server, [alice, dave], "bulk delete")
    }

    @Test func upgrade_CountsTheAdminsNewGalleries() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        // Galleries made before accounts (ownerless), one of them public; then the first admin takes them.
        _ = try server.createGallery("Before 1")
        let before = try server.createGallery("Before 2")
        _ = try server.json("PUT", "/parse/classes/Gallery/\(before)", ["ACL": ["*": ["read": true]]])
        _ = try server.createGallery("Before 3")
        let admin = try server.makeUser("admin", admin: true)
        #expect(try count(server, admin.headers) == 1, "only the public one before the assignment")
        let moved = try server.application.pool.query("select galleries from assign_ownerless_rows()").first!.decode(
            Int64.self, 0)
        #expect(moved == 3)
        try expectCountsMatch(server, [admin], "after the assignment")
        #expect(try count(server, admin.headers) == 3)
    }

    @Test func concurrentCreates_AreAllCounted() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let alice = try server.makeUser("alice")
        let bob = try server.makeUser("bob")
        let users = [alice, bob]
        for round in 0..<3 {
            let failures = Atomic(0)
            DispatchQueue.concurrentPerform(iterations: 12) { i in
                usleep(UInt32.random(in: 0...20_000))
                let owner = users[i % 2]
                let other = users[(i + 1) % 2]
                let acl: [String: Any]? =
                    switch i % 3 {
                    case 0: nil
                    case 1: [owner.objectId: ["read": true, "write": true], other.objectId: ["read": true]]
                    default: ["*": ["read": true]]
                    }
                var body: [String: Any] = ["name": "r\(round)-\(i)"]
                if let acl { body["ACL"] = acl }
                let r = try? server.json("POST", "/parse/classes/Gallery", body, headers: owner.headers)
                if r?.status != 201 { failures.add(1, ordering: .relaxed) }
            }
            #expect(failures.load(ordering: .relaxed) == 0)
            try expectCountsMatch(server, users, "round \(round)")
        }
        // Per round alice owns 6, and reads 2 of bob's shared with her and 2 of his public ones.
        #expect(try count(server, alice.headers) == 3 * (6 + 2 + 2))
    }
}
