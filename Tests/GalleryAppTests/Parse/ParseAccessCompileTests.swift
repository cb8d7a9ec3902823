import Foundation
import Testing

@testable import GalleryApp

/// The access filter as SQL (`ParseSQLCompiler+Access`): each caller's statements, the per-owner
/// counter, and the filters writes check. The rows themselves are tested in OwnershipTests.
@Suite struct ParseAccessCompileTests {
    private func compiled(_ schema: ParseClassSchema, _ items: [(name: String, value: String)], _ access: ParseAccess)
        throws -> ParseCompiledQuery
    {
        var query = try ParseQuery.find(schema, items: items)
        query.access = access
        return ParseSQLCompiler.compile(query)
    }

    private let alice = ParseAccess(caller: .user(objectId: "aliceId001"))

    @Test func user_FindsOwnAndSharedPhotos_InTwoBranches_AndCountsFromOwnCounter() throws {
        let find = try #require(try compiled(.photo, [("keys", "title"), ("count", "1")], alice).select)
        let order = "order by t.created_at desc, t.object_id desc"
        #expect(
            find.sql
                == "select t.object_id, t.created_at, t.updated_at, t.title from ("
                + "(select t.* from photos t where t.deleted_at is null and t.owner_id = $1::text \(order) limit $3::bigint)"
                + " union all (select t.* from photos t where t.deleted_at is null and t.readers <> '{}' and t.readers && $2::text[]"
                + " and t.owner_id is distinct from $1::text \(order) limit $3::bigint)) t \(order) limit $4::bigint offset $5::bigint"
        )
        #expect(find.binds == [.text("aliceId001"), .textArray(["*", "aliceId001"]), .int(100), .int(100), .int(0)])
        let count = try #require(try compiled(.photo, [("count", "1"), ("limit", "0")], alice).count)
        #expect(
            count.sql
                == "select coalesce((select n from owner_row_counts where owner_id = $1::text and name = 'photos_live'), 0)"
                + " + (select count(*) from photos t where t.deleted_at is null and t.readers <> '{}' and t.readers && $2::text[]"
                + " and t.owner_id is distinct from $1::text)")
        #expect(count.binds == [.text("aliceId001"), .textArray(["*", "aliceId001"])])
        // A filtered count counts the user's rows and those shared with them.
        let filtered = try #require(
            try compiled(.photo, [("count", "1"), ("limit", "0"), ("where", #"{"width":1}"#)], alice).count)
        #expect(
            filtered.sql.contains("(t.owner_id = $2::text or (t.readers <> '{}' and t.readers && $3::text[]))"),
            "\(filtered.sql)")
        // Roles are principals: one bind, the same array.
        let member = ParseAccess(caller: .user(objectId: "aliceId001"), roleNames: ["Admins", "Team A"])
        #expect(member.principals == ["*", "aliceId001", "role:Admins", "role:Team A"])
        let gallery = try #require(try compiled(.gallery, [], member).select)
        #expect(
            gallery.sql.contains("t.acl @> jsonb_build_object($2::text, '{\"read\":true}'::jsonb)"), "\(gallery.sql)")
        #expect(gallery.binds.contains(.text("role:Team A")))
        // A member's gallery count is counted for real (a gallery may grant them and their roles).
        #expect(
            try compiled(.gallery, [("count", "1"), ("limit", "0")], member).count?.sql.hasPrefix("select count(*)")
                == true)
    }

    @Test func master_IsUnfiltered_AndNoSessionReadsNothing_EvenWithoutAccounts() throws {
        let master = try #require(try compiled(.photo, [("keys", "title")], .master).select)
        #expect(!master.sql.contains("owner_id") && !master.sql.contains("users"))
        #expect(
            try compiled(.photo, [("count", "1"), ("limit", "0")], .master).count?.sql
                == "select n from row_counts where name = 'photos_live'")
        let anonymous = ParseAccess(caller: .anonymous)
        for schema in [ParseClassSchema.photo, .gallery, .galleryItem] {
            let find = try #require(try compiled(schema, [], anonymous).select).sql
            #expect(find.contains(" where false and "), "\(find)")
            #expect(!find.contains("users"), "no single-tenant mode: \(find)")
        }
        #expect(
            try compiled(.gallery, [("count", "1"), ("limit", "0")], anonymous).count?.sql
                == "select n from row_counts where false")
        // public_read: public galleries, their items, and photos whose ACL gives `*` read.
        let publicRead = ParseAccess(caller: .anonymous, publicRead: true)
        #expect(
            try #require(try compiled(.gallery, [], publicRead).select).sql.contains(#"t.acl @> '{"*":{"read":true}}'"#)
        )
        #expect(
            try #require(try compiled(.galleryItem, [], publicRead).select).sql.contains(
                #"ag.acl @> '{"*":{"read":true}}'"#))
        #expect(
            try #require(try compiled(.photo, [], publicRead).select).sql.contains(
                "(t.readers <> '{}' and t.readers @> '{*}')"))
    }

    @Test func galleryCount_ReadsThePublicAndTheUsersCounters() throws {
        let user = try #require(try compiled(.gallery, [("count", "1"), ("limit", "0")], alice).count)
        #expect(
            user.sql == "select coalesce((select n from row_counts where name = 'galleries_public_live'), 0)"
                + " + coalesce((select n from owner_row_counts where owner_id = $1::text and name = 'galleries_readable'), 0)"
        )
        #expect(user.binds == [.text("aliceId001")])
        let publicRead = try #require(
            try compiled(.gallery, [("count", "1"), ("limit", "0")], ParseAccess(caller: .anonymous, publicRead: true))
                .count)
        #expect(publicRead.sql == "select n from row_counts where name = 'galleries_public_live'")
        // Items have no counter: a count is a count(*) under the access filter.
        let items = try #require(try compiled(.galleryItem, [("count", "1"), ("limit", "0")], alice).count)
        #expect(items.sql.hasPrefix("select count(*) from gallery_items t"))
    }

    @Test func users_AreAllReadable_EmailOnlyOnTheCallersOwnRow() throws {
        let find = try #require(try compiled(.user, [("keys", "username,email")], alice).select)
        #expect(
            find.sql == "select t.object_id, t.created_at, t.updated_at, t.username,"
                + " case when t.object_id = $1::text then t.email end as email from users t"
                + " order by t.created_at desc, t.object_id desc limit $2::bigint offset $3::bigint")
        #expect(
            try #require(try compiled(.user, [("keys", "email")], .master).select).sql.contains("t.email from users t"))
        let anonymous = try #require(
            try compiled(.user, [("keys", "email")], ParseAccess(caller: .anonymous, publicRead: true)).select)
        #expect(anonymous.sql.contains("null::text as email from users t order"))
        #expect(
            try #require(try compiled(.user, [], ParseAccess(caller: .anonymous)).select).sql.contains(
                "from users t where false order"))
    }

    @Test func trash_IsTheOwnersAlone_WhereAQueryDoesNotHideIt() throws {
        // A get by id (the trash not hidden) with include: the item's photo and gallery too.
        var get = try ParseQuery.get(.galleryItem, objectId: "item000001", items: [("include", "photo,gallery")])
        get.access = alice
        let item = try #require(ParseSQLCompiler.compile(get).select)
        #expect(item.sql.contains("(p.deleted_at is null or p.owner_id = $"), "\(item.sql)")
        #expect(item.sql.contains("(g.deleted_at is null or g.owner_id = $"), "\(item.sql)")
        get.access = ParseAccess(caller: .anonymous, publicRead: true)
        let anonymous = try #require(ParseSQLCompiler.compile(get).select)
        #expect(anonymous.sql.contains("g.deleted_at is null and p.deleted_at is null"), "\(anonymous.sql)")
        get.access = .master
        let master = try #require(ParseSQLCompiler.compile(get).select).sql
        #expect(!master.contains("p.deleted_at is null") && !master.contains("g.deleted_at is null"), "\(master)")
        // Recently Deleted: a where on deletedAt shows a user their own trashed galleries only.
        let trash = try #require(try compiled(.gallery, [("where", #"{"deletedAt":{"$exists":true}}"#)], alice).select)
        #expect(trash.sql.contains("(t.deleted_at is null or t.owner_id = $"), "\(trash.sql)")
    }

    @Test func writes_NeedEditOrOwnership() throws {
        let own = ParseSQLCompiler.accessCheck(.gallery, objectId: "gal0000001", access: alice, need: .own)
        #expect(own.sql == "select 1 from galleries t where t.object_id = $1::text and t.owner_id = $2::text")
        let edit = ParseSQLCompiler.accessCheck(.gallery, objectId: "gal0000001", access: alice, need: .edit)
        #expect(edit.sql.contains(#"jsonb_build_object($2::text, '{"write":true}'::jsonb)"#))
        let item = ParseSQLCompiler.accessCheck(.galleryItem, objectId: "itm0000001", access: alice, need: .own)
        #expect(
            item.sql.contains("exists (select 1 from galleries ag where ag.object_id = t.gallery_id")
                && item.sql.contains("write"))
        #expect(
            ParseSQLCompiler.accessCheck(.photo, objectId: "pho0000001", access: .master, need: .own).sql
                == "select 1 from photos t where t.object_id = $1::text")
    }

    @Test func acl_IsNormalizedToItsGrants() throws {
        let acl = try ParseACL.parse(
            try ParseJSONParser.parse(
                #"{"zed0000001":{"read":true,"write":false},"*":{"read":true},"off0000001":{"read":false}}"#,
                maxDepth: 8))
        #expect(acl.json == #"{"*":{"read":true},"zed0000001":{"read":true}}"#)
        #expect(
            try ParseACL.parse(try ParseJSONParser.parse(#"{"role:Admins":{"read":true}}"#, maxDepth: 8)).json
                == #"{"role:Admins":{"read":true}}"#)
        #expect(throws: ParseError.self) {
            try ParseACL.parse(try ParseJSONParser.parse(#"{"role:Ad/mins":{"read":true}}"#, maxDepth: 8))
        }
    }
}
