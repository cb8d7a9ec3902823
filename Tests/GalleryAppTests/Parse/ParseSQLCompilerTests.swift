import Foundation
import Testing

@testable import GalleryApp

/// Whole statements: projection, trash filter, order, paging, counts and include joins.
@Suite struct ParseSQLCompilerTests {
    @Test func compiler_SelectsRequestedKeys_WithDefaultOrderAndTrashFilter() throws {
        let compiled = try compileFind(.photo, [("keys", "title")])
        let select = try #require(compiled.select)
        #expect(
            select.sql
                == "select t.object_id, t.created_at, t.updated_at, t.title from photos t where t.deleted_at is null"
                + " order by t.created_at desc, t.object_id desc limit $1::bigint offset $2::bigint")
        #expect(select.binds == [.int(100), .int(0)])
        #expect(compiled.count == nil)
    }

    @Test func compiler_CombinesWhereOrderLimitAndSkip() throws {
        let compiled = try compileFind(
            .photo,
            [
                ("where", #"{"width":{"$gt":10}}"#), ("keys", "title,width"), ("order", "-width, title"),
                ("limit", "5"), ("skip", "10"),
            ])
        let select = try #require(compiled.select)
        #expect(
            select.sql
                == "select t.object_id, t.created_at, t.updated_at, t.title, t.width from photos t"
                + " where t.width > $1::bigint and t.deleted_at is null"
                + " order by t.width desc, t.title asc, t.object_id asc limit $2::bigint offset $3::bigint")
        #expect(select.binds == [.int(10), .int(5), .int(10)])
    }

    @Test func compiler_KeepsObjectIdOrder_WithoutAddingATieBreaker() throws {
        let select = try #require(try compileFind(.photo, [("order", "objectId"), ("keys", "title")]).select)
        #expect(select.sql.hasSuffix("order by t.object_id asc limit $1::bigint offset $2::bigint"))
    }

    @Test func compiler_SelectsEveryColumn_WhenNoKeysAreGiven() throws {
        let select = try #require(try compileFind(.photo, []).select)
        // Every stored column, in the schema's order (computed and opt-in fields select nothing).
        let expectedColumns = ParseClassSchema.photo.fields.compactMap { field -> String? in
            guard case .column(let column) = field.source else { return nil }
            return "t." + column
        }
        #expect(select.sql.hasPrefix("select " + expectedColumns.joined(separator: ", ") + " from photos t "))
        #expect(!select.sql.contains("t.search"))
    }

    @Test func compiler_ExcludesKeys_ButAlwaysKeepsObjectIdAndDates() throws {
        let select = try #require(
            try compileFind(.gallery, [("excludeKeys", "objectId,createdAt,name,coverPhoto")]).select)
        #expect(
            select.sql
                == "select t.object_id, t.created_at, t.updated_at, t.deleted_at, t.photo_count, t.owner_id, t.acl from galleries t"
                + " where t.deleted_at is null order by t.created_at desc, t.object_id desc limit $1::bigint offset $2::bigint"
        )
    }

    @Test func compiler_ClampsLimit_ToTheConfiguredMaximum() throws {
        #expect(try compileFind(.photo, [("limit", "5000")]).select?.binds.suffix(2) == [.int(1000), .int(0)])
        var limits = ParseLimits()
        limits.maxLimit = 50
        #expect(
            try compileFind(.photo, [("limit", "51")], limits: limits).select?.binds.suffix(2) == [.int(50), .int(0)])
    }

    @Test func compiler_CountsWithTheO1Counter_WhenThereIsNoWhere() throws {
        let photos = try compileFind(.photo, [("count", "1"), ("limit", "0")])
        #expect(photos.select == nil)
        #expect(
            photos.count == ParseSQLStatement(sql: "select n from row_counts where name = 'photos_live'", binds: []))
        let emptyWhere = try compileFind(.photo, [("count", "true"), ("where", "{}")])
        #expect(emptyWhere.count?.sql == "select n from row_counts where name = 'photos_live'")
        #expect(emptyWhere.select != nil)
        let galleries = try compileFind(.gallery, [("count", "1")])
        #expect(galleries.count?.sql == "select n from row_counts where name = 'galleries_live'")
    }

    @Test func compiler_CountsMatchingRows_WhenThereIsAWhere() throws {
        let compiled = try compileFind(.photo, [("count", "1"), ("where", #"{"width":{"$gt":10}}"#), ("limit", "0")])
        #expect(
            compiled.count
                == ParseSQLStatement(
                    sql: "select count(*) from photos t where t.width > $1::bigint and t.deleted_at is null",
                    binds: [.int(10)]))
        #expect(try compileFind(.photo, [("count", "0")]).count == nil)
        #expect(try compileFind(.photo, [("count", "false")]).count == nil)
    }

    @Test func compiler_ListsTrashedRows_WhenWhereNamesDeletedAt() throws {
        let compiled = try compileFind(
            .photo, [("where", #"{"deletedAt":{"$exists":true}}"#), ("keys", "deletedAt"), ("count", "1")])
        #expect(
            compiled.select?.sql
                == "select t.object_id, t.created_at, t.updated_at, t.deleted_at from photos t where t.deleted_at is not null"
                + " order by t.created_at desc, t.object_id desc limit $1::bigint offset $2::bigint")
        #expect(compiled.count?.sql == "select count(*) from photos t where t.deleted_at is not null")
        let inOr = try compileFind(.gallery, [("where", #"{"$or":[{"name":"a"},{"deletedAt":{"$exists":false}}]}"#)])
        #expect(inOr.select?.sql.contains("t.deleted_at is null order") == false)
    }

    @Test func compiler_HidesGalleryItems_WhosePhotoOrGalleryIsTrashed() throws {
        let compiled = try compileFind(.galleryItem, [("count", "1"), ("keys", "position")])
        #expect(
            compiled.select?.sql
                == "select t.object_id, t.created_at, t.updated_at, t.position from gallery_items t"
                + " join galleries g on g.object_id = t.gallery_id join photos p on p.object_id = t.photo_id"
                + " where g.deleted_at is null and p.deleted_at is null"
                + " order by t.created_at desc, t.object_id desc limit $1::bigint offset $2::bigint")
        #expect(
            compiled.count?.sql
                == "select count(*) from gallery_items t join galleries g on g.object_id = t.gallery_id"
                + " join photos p on p.object_id = t.photo_id where g.deleted_at is null and p.deleted_at is null")
    }

    @Test func compiler_IncludesPhotoOfGalleryItem_InTheSameQuery() throws {
        let compiled = try compileFind(
            .galleryItem,
            [
                ("where", #"{"gallery":{"__type":"Pointer","className":"Gallery","objectId":"G123456789"}}"#),
                ("include", "photo"), ("keys", "position,photo.title"), ("order", "position"),
            ])
        let select = try #require(compiled.select)
        #expect(
            select.sql
                == "select t.object_id, t.created_at, t.updated_at, t.photo_id, t.position,"
                + " p.object_id as p__object_id, p.created_at as p__created_at, p.updated_at as p__updated_at, p.title as p__title"
                + " from gallery_items t join galleries g on g.object_id = t.gallery_id join photos p on p.object_id = t.photo_id"
                + " where t.gallery_id = $1::text and g.deleted_at is null and p.deleted_at is null"
                + " order by t.position asc, t.object_id asc limit $2::bigint offset $3::bigint")
        #expect(select.binds == [.text("G123456789"), .int(100), .int(0)])
        #expect(
            compiled.projection.includes["photo"]?.resultColumns == [
                "p__object_id", "p__created_at", "p__updated_at", "p__title",
            ])
    }

    @Test func compiler_IncludesEveryPhotoColumn_AndTheGallery_WithStar() throws {
        let select = try #require(try compileFind(.galleryItem, [("include", "*")]).select)
        #expect(select.sql.contains("p.original_key as p__original_key"))
        #expect(select.sql.contains("g.name as g__name"))
        #expect(
            select.sql.contains(
                "(select gi.photo_id from gallery_items gi join photos ph on ph.object_id = gi.photo_id"
                    + " where gi.gallery_id = g.object_id and ph.deleted_at is null order by gi.position limit 1) as g__cover_photo_id"
            ))
        #expect(select.sql.components(separatedBy: " join ").count - 1 == 3)  // two joins + the cover subquery's
    }

    @Test func compiler_ComputesCoverPhoto_WithASubquery() throws {
        let select = try #require(try compileFind(.gallery, [("keys", "coverPhoto")]).select)
        #expect(
            select.sql
                == "select t.object_id, t.created_at, t.updated_at, (select gi.photo_id from gallery_items gi"
                + " join photos ph on ph.object_id = gi.photo_id where gi.gallery_id = t.object_id and ph.deleted_at is null"
                + " order by gi.position limit 1) as cover_photo_id from galleries t where t.deleted_at is null"
                + " order by t.created_at desc, t.object_id desc limit $1::bigint offset $2::bigint")
    }

    @Test func compiler_IncludesCoverPhoto_WithALateralJoin() throws {
        let select = try #require(
            try compileFind(.gallery, [("include", "coverPhoto"), ("keys", "name,coverPhoto.title")]).select)
        #expect(
            select.sql
                == "select t.object_id, t.created_at, t.updated_at, t.name, cp.object_id as cover_photo_id,"
                + " cp.object_id as cp__object_id, cp.created_at as cp__created_at, cp.updated_at as cp__updated_at, cp.title as cp__title"
                + " from galleries t left join lateral (select ph.object_id, ph.created_at, ph.updated_at, ph.title"
                + " from gallery_items gi join photos ph on ph.object_id = gi.photo_id"
                + " where gi.gallery_id = t.object_id and ph.deleted_at is null order by gi.position limit 1) cp on true"
                + " where t.deleted_at is null order by t.created_at desc, t.object_id desc limit $1::bigint offset $2::bigint"
        )
    }

    @Test func compiler_OrdersByRelevance_AndSelectsScore_ForDollarScore() throws {
        let compiled = try compileFind(
            .photo,
            [("where", #"{"title":{"$text":{"$search":{"$term":"beach"}}}}"#), ("order", "$score"), ("keys", "title")])
        let select = try #require(compiled.select)
        #expect(
            select.sql
                == "select t.object_id, t.created_at, t.updated_at, t.title, ts_rank(t.search, websearch_to_tsquery('simple', $2::text)) as score"
                + " from photos t where t.search @@ websearch_to_tsquery('simple', $1::text) and t.deleted_at is null"
                + " order by score desc, t.object_id desc limit $3::bigint offset $4::bigint")
        #expect(select.binds == [.text("beach"), .text("beach"), .int(100), .int(0)])
        #expect(compiled.projection.includesScore)
    }

    @Test func compiler_GetByObjectId_FindsTrashedObjectsToo() throws {
        let query = try ParseQuery.get(.photo, objectId: "AbCdEf1234", items: [(name: "keys", value: "title")])
        let select = try #require(ParseSQLCompiler.compile(query).select)
        #expect(
            select.sql
                == "select t.object_id, t.created_at, t.updated_at, t.title from photos t where t.object_id = $1::text"
                + " order by t.created_at desc, t.object_id desc limit $2::bigint offset $3::bigint")
        #expect(select.binds == [.text("AbCdEf1234"), .int(1), .int(0)])
        #expect(
            parseErrorCode { _ = try ParseQuery.get(.photo, objectId: "x", items: [(name: "where", value: "{}")]) }
                == 102)
    }

    @Test func compiler_NeverPutsAClientValueInSQLText() throws {
        let marker = "zq'\"; drop table photos; --"
        let escaped = marker.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
        let wheres = [
            #"{"title":"\#(escaped)"}"#, #"{"status":{"$in":["\#(escaped)"]}}"#, #"{"tags":"\#(escaped)"}"#,
            #"{"title":{"$regex":"^\#(escaped)"}}"#, #"{"title":{"$text":{"$search":{"$term":"\#(escaped)"}}}}"#,
            #"{"objectId":{"$ne":"\#(escaped)"}}"#,
        ]
        for whereText in wheres {
            let compiled = try compileFind(.photo, [("where", whereText), ("count", "1")])
            for statement in [compiled.select, compiled.count].compactMap({ $0 }) {
                #expect(!statement.sql.contains("zq"), "\(statement.sql)")
                #expect(!statement.sql.contains("drop"), "\(statement.sql)")
            }
        }
    }
}
