import Foundation
import Testing

@testable import GalleryApp

/// Every `where` operator compiles to the expected SQL fragment and binds.
@Suite struct ParseWhereCompileTests {
    @Test func where_CompilesPlainEquality_ToBoundText() throws {
        let (sql, binds) = try compileWhere(#"{"title":"cat"}"#)
        #expect(sql == "t.title = $1::text")
        #expect(binds == [.text("cat")])
    }

    @Test func where_CompilesComparisons_WithIntAndDoubleTyping() throws {
        #expect(try compileWhere(#"{"width":{"$gt":100}}"#) == ("t.width > $1::bigint", [.int(100)]))
        #expect(try compileWhere(#"{"width":{"$gte":1.5}}"#) == ("t.width >= $1::float8", [.double(1.5)]))
        #expect(try compileWhere(#"{"width":{"$lt":2.0}}"#) == ("t.width < $1::bigint", [.int(2)]))
        #expect(try compileWhere(#"{"aspectRatio":{"$lte":2}}"#) == ("t.aspect_ratio <= $1::float8", [.double(2)]))
        #expect(try compileWhere(#"{"title":{"$gt":"m"}}"#) == ("t.title > $1::text", [.text("m")]))
    }

    @Test func where_CompilesSeveralOperatorsOnOneField_AsAnd() throws {
        let (sql, binds) = try compileWhere(#"{"width":{"$lte":100,"$gt":10}}"#)
        #expect(sql == "(t.width <= $1::bigint and t.width > $2::bigint)")
        #expect(binds == [.int(100), .int(10)])
    }

    @Test func where_CompilesSeveralFields_AsAnd() throws {
        let (sql, binds) = try compileWhere(#"{"title":"a","width":1}"#)
        #expect(sql == "(t.title = $1::text and t.width = $2::bigint)")
        #expect(binds == [.text("a"), .int(1)])
    }

    @Test func where_CompilesEqAndNe_NullSafe() throws {
        #expect(try compileWhere(#"{"status":{"$eq":"ready"}}"#) == ("t.status = $1::text", [.text("ready")]))
        #expect(
            try compileWhere(#"{"status":{"$ne":"ready"}}"#) == ("t.status is distinct from $1::text", [.text("ready")])
        )
        #expect(try compileWhere(#"{"error":{"$ne":null}}"#) == ("t.error is not null", []))
        #expect(try compileWhere(#"{"error":null}"#) == ("t.error is null", []))
    }

    @Test func where_CompilesInAndNin_AsOneArrayBind() throws {
        #expect(
            try compileWhere(#"{"status":{"$in":["ready","failed"]}}"#) == (
                "t.status = any($1::text[])", [.textArray(["ready", "failed"])]
            ))
        #expect(
            try compileWhere(#"{"status":{"$nin":["ready"]}}"#)
                == ("(t.status is null or not t.status = any($1::text[]))", [.textArray(["ready"])]))
        #expect(
            try compileWhere(#"{"width":{"$in":[1,2]}}"#) == (
                "t.width = any($1::text[]::bigint[])", [.textArray(["1", "2"])]
            ))
        #expect(
            try compileWhere(#"{"width":{"$in":[1,2.5]}}"#) == (
                "t.width = any($1::text[]::float8[])", [.textArray(["1", "2.5"])]
            ))
        #expect(try compileWhere(#"{"width":{"$in":[]}}"#) == ("t.width = any($1::text[]::bigint[])", [.textArray([])]))
        #expect(
            try compileWhere(#"{"error":{"$in":["x",null]}}"#) == (
                "(t.error = any($1::text[]) or t.error is null)", [.textArray(["x"])]
            ))
        #expect(
            try compileWhere(#"{"error":{"$nin":["x",null]}}"#)
                == ("(t.error is not null and not t.error = any($1::text[]))", [.textArray(["x"])]))
        let dates = try compileWhere(#"{"takenAt":{"$in":[{"__type":"Date","iso":"2024-01-02T03:04:05.678Z"}]}}"#)
        #expect(dates == ("t.taken_at = any($1::text[]::timestamptz[])", [.textArray(["2024-01-02T03:04:05.678Z"])]))
    }

    @Test func where_CompilesExists() throws {
        #expect(try compileWhere(#"{"error":{"$exists":true}}"#) == ("t.error is not null", []))
        #expect(try compileWhere(#"{"takenAt":{"$exists":false}}"#) == ("t.taken_at is null", []))
        #expect(try compileWhere(#"{"thumbnail":{"$exists":true}}"#) == ("t.thumbnail_key is not null", []))
    }

    @Test func where_CompilesOrAndAnd() throws {
        #expect(
            try compileWhere(#"{"$or":[{"title":"a"},{"width":{"$gt":5}}]}"#)
                == ("(t.title = $1::text or t.width > $2::bigint)", [.text("a"), .int(5)]))
        #expect(
            try compileWhere(#"{"$and":[{"title":"a"},{"title":"b"}]}"#)
                == ("(t.title = $1::text and t.title = $2::text)", [.text("a"), .text("b")]))
        #expect(
            try compileWhere(#"{"$or":[{"$and":[{"width":1},{"height":2}]},{"title":"x"}]}"#)
                == (
                    "((t.width = $1::bigint and t.height = $2::bigint) or t.title = $3::text)",
                    [.int(1), .int(2), .text("x")]
                ))
    }

    @Test func where_UsesParseArraySemantics_ForTags() throws {
        #expect(try compileWhere(#"{"tags":"cat"}"#) == ("t.tags @> $1::text[]", [.textArray(["cat"])]))
        #expect(try compileWhere(#"{"tags":{"$eq":"cat"}}"#) == ("t.tags @> $1::text[]", [.textArray(["cat"])]))
        #expect(try compileWhere(#"{"tags":["a","b"]}"#) == ("t.tags = $1::text[]", [.textArray(["a", "b"])]))
        #expect(
            try compileWhere(#"{"tags":{"$all":["a","b"]}}"#) == ("t.tags @> $1::text[]", [.textArray(["a", "b"])]))
        #expect(try compileWhere(#"{"tags":{"$in":["a","b"]}}"#) == ("t.tags && $1::text[]", [.textArray(["a", "b"])]))
        #expect(try compileWhere(#"{"tags":{"$nin":["a"]}}"#) == ("not (t.tags && $1::text[])", [.textArray(["a"])]))
        #expect(try compileWhere(#"{"tags":{"$ne":"a"}}"#) == ("not (t.tags @> $1::text[])", [.textArray(["a"])]))
    }

    @Test func where_CompilesDates_FromParseDateObjects() throws {
        let (sql, binds) = try compileWhere(
            #"{"createdAt":{"$gt":{"__type":"Date","iso":"2024-01-02T03:04:05.678Z"}}}"#)
        #expect(sql == "t.created_at > $1::timestamptz")
        #expect(binds == [.timestamp(isoDate("2024-01-02T03:04:05.678Z"))])
        #expect(ParseDate.milliseconds(isoDate("2024-01-02T03:04:05.678Z")) == 1_704_164_645_678)
    }

    @Test func where_ComparesPointers_OnTheForeignKey() throws {
        let (sql, binds) = try compileWhere(
            #"{"gallery":{"__type":"Pointer","className":"Gallery","objectId":"abc123XYZ0"}}"#, .galleryItem)
        #expect(sql == "t.gallery_id = $1::text")
        #expect(binds == [.text("abc123XYZ0")])
        let list = try compileWhere(
            #"{"photo":{"$in":[{"__type":"Pointer","className":"Photo","objectId":"a1"},{"__type":"Pointer","className":"Photo","objectId":"b2"}]}}"#,
            .galleryItem)
        #expect(list == ("t.photo_id = any($1::text[])", [.textArray(["a1", "b2"])]))
    }

    @Test func where_RejectsPointer_WhenClassNameIsWrongOrMalformed() {
        #expect(
            parseErrorCode {
                _ = try compileWhere(
                    #"{"gallery":{"__type":"Pointer","className":"Photo","objectId":"abc"}}"#, .galleryItem)
            } == 106)
        #expect(
            parseErrorCode {
                _ = try compileWhere(#"{"gallery":{"__type":"Pointer","className":"Gallery"}}"#, .galleryItem)
            } == 106)
        #expect(parseErrorCode { _ = try compileWhere(#"{"gallery":"abc"}"#, .galleryItem) } == 102)
    }

    @Test func where_CompilesAnchoredRegexPrefix_ToAByteOrderRange() throws {
        #expect(
            try compileWhere(#"{"title":{"$regex":"^Sun"}}"#)
                == ("(t.title ~>=~ $1::text and t.title ~<~ $2::text)", [.text("Sun"), .text("Suo")]))
        #expect(
            try compileWhere(#"{"filename":{"$regex":"^100%_off\\."}}"#)
                == ("(t.filename ~>=~ $1::text and t.filename ~<~ $2::text)", [.text("100%_off."), .text("100%_off/")]))
        #expect(
            try compileWhere(#"{"title":{"$regex":"^a\\\\b"}}"#)
                == ("(t.title ~>=~ $1::text and t.title ~<~ $2::text)", [.text("a\\b"), .text("a\\c")]))
        #expect(try compileWhere(#"{"title":{"$regex":"^"}}"#) == ("t.title is not null", []))
        #expect(
            try compileWhere("{\"title\":{\"$regex\":\"^\u{10FFFF}\"}}") == (
                "t.title ~>=~ $1::text", [.text("\u{10FFFF}")]
            ))
    }

    @Test func where_CompilesOtherRegexes_ToBoundedPostgresPatterns() throws {
        #expect(try compileWhere(#"{"title":{"$regex":"cat|dog"}}"#) == ("t.title ~ $1::text", [.text("(?p)cat|dog")]))
        #expect(
            try compileWhere(#"{"title":{"$regex":"^cat","$options":"i"}}"#) == (
                "t.title ~* $1::text", [.text("(?p)^cat")]
            ))
        #expect(
            try compileWhere(#"{"title":{"$regex":"\\bsun\\b","$options":"ms"}}"#) == (
                "t.title ~ $1::text", [.text("(?w)\\ysun\\y")]
            ))
        #expect(
            try compileWhere(#"{"title":{"$regex":"a b # comment","$options":"x"}}"#) == (
                "t.title ~ $1::text", [.text("(?p)ab")]
            ))
    }

    @Test func where_CompilesTextSearch_OnTheSearchVector() throws {
        let (sql, binds) = try compileWhere(#"{"title":{"$text":{"$search":{"$term":"sunset beach"}}}}"#)
        #expect(sql == "t.search @@ websearch_to_tsquery('simple', $1::text)")
        #expect(binds == [.text("sunset beach")])
        let withOptions = try compileWhere(
            #"{"tags":{"$text":{"$search":{"$term":"x","$language":"simple","$caseSensitive":false,"$diacriticSensitive":true}}}}"#
        )
        #expect(withOptions.1 == [.text("x")])
    }

    @Test func where_RejectsMalformedTextSearch_With107LikeParseServer() {
        #expect(parseErrorCode { _ = try compileWhere(#"{"title":{"$text":{"$search":"x"}}}"#) } == 107)
        #expect(parseErrorCode { _ = try compileWhere(#"{"title":{"$text":{"$search":{"$term":5}}}}"#) } == 107)
        #expect(
            parseErrorCode {
                _ = try compileWhere(#"{"title":{"$text":{"$search":{"$term":"a","$caseSensitive":true}}}}"#)
            } == 107)
        #expect(
            parseErrorCode {
                _ = try compileWhere(#"{"title":{"$text":{"$search":{"$term":"a","$language":"english"}}}}"#)
            } == 107)
        #expect(
            parseErrorCode {
                _ = try compileWhere(#"{"title":{"$text":{"$search":{"$term":"a","$diacriticSensitive":false}}}}"#)
            } == 107)
        #expect(parseErrorCode { _ = try compileWhere(#"{"width":{"$text":{"$search":{"$term":"a"}}}}"#) } == 102)
        #expect(
            parseErrorCode { _ = try compileWhere(#"{"name":{"$text":{"$search":{"$term":"a"}}}}"#, .gallery) } == 102)
    }

    @Test func where_RejectsUnknownFieldsAndOperators_With102() {
        #expect(parseErrorCode { _ = try compileWhere(#"{"foo":1}"#) } == 102)
        #expect(parseErrorCode { _ = try compileWhere(#"{"width":{"$foo":1}}"#) } == 102)
        #expect(parseErrorCode { _ = try compileWhere(#"{"$nor":[{"width":1}]}"#) } == 102)
        #expect(parseErrorCode { _ = try compileWhere(#"{"$where":"1=1"}"#) } == 102)
        #expect(parseErrorCode { _ = try compileWhere(#"{"width":{"$inQuery":{}}}"#) } == 102)
        #expect(parseErrorCode { _ = try compileWhere(#"{"width":{"$gt":1,"foo":2}}"#) } == 102)
        #expect(parseErrorCode { _ = try compileWhere(#"{"width":{}}"#) } == 102)
        #expect(parseErrorCode { _ = try compileWhere(#"{"coverPhoto":{"$exists":true}}"#, .gallery) } == 102)
        #expect(parseErrorCode { _ = try compileWhere(#"{"photo.title":"x"}"#, .galleryItem) } == 102)
        #expect(parseErrorCode { _ = try compileWhere(#"[1]"#) } == 102)
        #expect(parseErrorCode { _ = try compileWhere(#"{"$or":[]}"#) } == 102)
        #expect(parseErrorCode { _ = try compileWhere(#"{"$or":{"title":"a"}}"#) } == 102)
        #expect(parseErrorCode { _ = try compileWhere(#"{"$or":[1]}"#) } == 102)
    }

    @Test func where_RejectsTypeMismatches_With102() {
        #expect(parseErrorCode { _ = try compileWhere(#"{"width":{"$gt":"abc"}}"#) } == 102)
        #expect(parseErrorCode { _ = try compileWhere(#"{"width":"10"}"#) } == 102)
        #expect(parseErrorCode { _ = try compileWhere(#"{"width":true}"#) } == 102)
        #expect(parseErrorCode { _ = try compileWhere(#"{"title":5}"#) } == 102)
        #expect(parseErrorCode { _ = try compileWhere(#"{"width":{"$gt":null}}"#) } == 102)
        #expect(parseErrorCode { _ = try compileWhere(#"{"createdAt":{"$gt":"2024-01-01"}}"#) } == 102)
        #expect(
            parseErrorCode {
                _ = try compileWhere(#"{"createdAt":{"$gt":{"__type":"Date","iso":"2024-13-01T00:00:00Z"}}}"#)
            } == 102)
        #expect(
            parseErrorCode {
                _ = try compileWhere(#"{"createdAt":{"$gt":{"__type":"Date","iso":"2023-02-29T00:00:00Z"}}}"#)
            } == 102)
        #expect(parseErrorCode { _ = try compileWhere(#"{"tags":{"$lt":"a"}}"#) } == 102)
        #expect(parseErrorCode { _ = try compileWhere(#"{"tags":5}"#) } == 102)
        #expect(parseErrorCode { _ = try compileWhere(#"{"tags":{"$all":[1]}}"#) } == 102)
        #expect(parseErrorCode { _ = try compileWhere(#"{"title":{"$all":["a"]}}"#) } == 102)
        #expect(parseErrorCode { _ = try compileWhere(#"{"status":{"$in":"ready"}}"#) } == 102)
        #expect(parseErrorCode { _ = try compileWhere(#"{"status":{"$in":[1]}}"#) } == 102)
        #expect(parseErrorCode { _ = try compileWhere(#"{"error":{"$exists":"yes"}}"#) } == 102)
        #expect(parseErrorCode { _ = try compileWhere(#"{"thumbnail":"x.jpg"}"#) } == 102)
        #expect(parseErrorCode { _ = try compileWhere(#"{"thumbnail":{"$eq":"x.jpg"}}"#) } == 102)
        #expect(parseErrorCode { _ = try compileWhere(#"{"width":{"$regex":"1"}}"#) } == 102)
        #expect(parseErrorCode { _ = try compileWhere(#"{"title":{"$regex":5}}"#) } == 102)
        #expect(parseErrorCode { _ = try compileWhere(#"{"title":{"$options":"i"}}"#) } == 102)
        #expect(parseErrorCode { _ = try compileWhere(#"{"title":{"$regex":"a","$options":"g"}}"#) } == 102)
    }

    @Test func where_BoundsListsAndConditionCounts() {
        var limits = ParseLimits()
        limits.maxInListCount = 3
        #expect(parseErrorCode { _ = try compileWhere(#"{"width":{"$in":[1,2,3,4]}}"#, limits: limits) } == 102)
        #expect(parseErrorCode { _ = try compileWhere(#"{"tags":{"$all":["a","b","c","d"]}}"#, limits: limits) } == 102)
        #expect((try? compileWhere(#"{"width":{"$in":[1,2,3]}}"#, limits: limits)) != nil)
        limits.maxConditions = 4
        #expect(
            parseErrorCode { _ = try compileWhere(#"{"$or":[{"width":1},{"width":2},{"width":3}]}"#, limits: limits) }
                == 102)
    }
}
