import Foundation
import Testing

@testable import GalleryApp

/// Query parameters: accepted values, strictness, and hostile input.
@Suite struct ParseQueryTests {
    private func find(
        _ items: [(String, String)], _ schema: ParseClassSchema = .photo, limits: ParseLimits = ParseLimits()
    ) throws -> ParseQuery {
        try ParseQuery.find(schema, items: items.map { (name: $0.0, value: $0.1) }, limits: limits)
    }

    @Test func query_UsesParseDefaults_WhenNoParametersAreGiven() throws {
        let query = try find([])
        #expect(query.limit == 100)
        #expect(query.skip == 0)
        #expect(query.count == false)
        #expect(query.condition == nil)
        #expect(query.order.isEmpty)
        #expect(query.hidesTrashed)
        // Every field but the opt-in ones (`sizes`, asked for with `keys`).
        #expect(query.projection.fields.count == ParseClassSchema.photo.fields.filter { !$0.isOptIn }.count)
    }

    @Test func query_ParsesLimitSkipCountAndOrder() throws {
        let query = try find([("limit", "0"), ("skip", "20"), ("count", "1"), ("order", "-createdAt,title")])
        #expect(query.limit == 0)
        #expect(query.skip == 20)
        #expect(query.count)
        #expect(query.order == [.field("createdAt", descending: true), .field("title", descending: false)])
    }

    @Test func query_RejectsBadLimitsAndSkips_With102() {
        for items in [
            [("limit", "-1")], [("limit", "abc")], [("limit", "1.5")], [("limit", "")],
            [("limit", "99999999999999999999999")],
            [("skip", "-1")], [("skip", "10001")], [("skip", "1e3")], [("count", "yes")], [("count", "")],
        ] {
            #expect(parseErrorCode { _ = try find(items) } == 102, "\(items)")
        }
        #expect((try? find([("skip", "10000")])) != nil)
    }

    @Test func query_RejectsUnknownAndRepeatedParameters_With102() {
        for items in [
            [("foo", "1")], [("_method", "GET")], [("redirectClassNameForKey", "x")], [("readPreferences", "PRIMARY")],
            [("Explain", "true")], [("hint", "x"), ("hint", "y")], [("limit", "1"), ("limit", "2")], [("Where", "{}")],
        ] {
            #expect(parseErrorCode { _ = try find(items) } == 102, "\(items)")
        }
        #expect(parseErrorMessage { _ = try find([("foo", "1")]) } == "Invalid parameter for query: 'foo'")
    }

    @Test func query_RejectsUnknownOrUnsortableOrderKeys_With102() {
        for order in [
            "foo", "tags", "thumbnail", "title;drop table photos", "title desc", "-", "title,,width", "title,title",
            "$score",
        ] {
            #expect(parseErrorCode { _ = try find([("order", order)]) } == 102, "\(order)")
        }
    }

    @Test func query_RejectsUnknownKeysAndIncludes_With102() {
        for items in [
            [("keys", "foo")], [("keys", "title,object_id")], [("keys", "title from photos; --")],
            [("excludeKeys", "foo")],
            [("include", "title")], [("include", "foo")], [("include", "photo.gallery")], [("keys", "photo.foo")],
            [("keys", "title.length")], [("keys", "$score")],
        ] {
            #expect(parseErrorCode { _ = try find(items, .galleryItem) } == 102, "\(items)")
        }
    }

    @Test func query_DottedKeys_ForceTheIncludeLikeParseServer() throws {
        let query = try find([("keys", "photo.title")], .galleryItem)
        #expect(query.projection.fields.map(\.name) == ["objectId", "createdAt", "updatedAt", "photo"])
        #expect(
            query.projection.includes["photo"]?.fields.map(\.name) == ["objectId", "createdAt", "updatedAt", "title"])
        let excluded = try find([("include", "photo"), ("excludeKeys", "photo.tags,gallery")], .galleryItem)
        #expect(
            excluded.projection.fields.map(\.name) == [
                "objectId", "createdAt", "updatedAt", "photo", "position", "owner",
            ])
        #expect(excluded.projection.includes["photo"]?.fields.contains { $0.name == "tags" } == false)
    }

    @Test func query_ParsesARawPercentEncodedQueryString() throws {
        let query = try ParseQuery.find(
            .photo, rawQuery: "where=%7B%22title%22%3A%22a+b%22%7D&limit=5&&order=-createdAt")
        #expect(query.condition == .compare(field: "title", op: .equal, value: .text("a b")))
        #expect(query.limit == 5)
    }

    @Test func query_RejectsInvalidUTF8AndBadEscapes_InTheRawQuery_With102() {
        #expect(
            parseErrorCode { _ = try ParseQuery.find(.photo, rawQuery: "where=%7B%22title%22%3A%22%FF%22%7D") } == 102)
        #expect(parseErrorCode { _ = try ParseQuery.find(.photo, rawQuery: "where=%C3%28") } == 102)
        #expect(parseErrorCode { _ = try ParseQuery.find(.photo, rawQuery: "limit=%zz") } == 102)
        #expect(parseErrorCode { _ = try ParseQuery.find(.photo, rawQuery: "limit=%4") } == 102)
        // An encoded surrogate.
        #expect(parseErrorCode { _ = try ParseQuery.find(.photo, rawQuery: "%ED%A0%80=1") } == 102)
    }

    @Test func query_RejectsMalformedWhereJSON_With102() {
        for text in [
            "{", "", "{'title':'a'}", #"{"title":"a"} x"#, #"{"title":"a","title":"b"}"#, #"{"title":"\ud800"}"#,
        ] {
            #expect(parseErrorCode { _ = try find([("where", text)]) } == 102, "\(text)")
        }
        #expect(parseErrorCode { _ = try find([("where", "[]")]) } == 102)
        #expect(parseErrorCode { _ = try find([("where", "null")]) } == 102)
    }

    @Test func query_RejectsDeepNesting_With102_WithoutCrashing() {
        let deep = String(repeating: #"{"$or":["#, count: 1000) + "{}" + String(repeating: "]}", count: 1000)
        var limits = ParseLimits()
        limits.maxWhereBytes = 1 << 20
        #expect(parseErrorCode { _ = try find([("where", deep)], limits: limits) } == 102)
        let deepArray =
            #"{"status":{"$in":"# + String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
            + "}}"
        limits.maxWhereBytes = 1 << 21
        #expect(parseErrorCode { _ = try find([("where", deepArray)], limits: limits) } == 102)
        var shallow = ParseLimits()
        shallow.maxJSONDepth = 2
        #expect(parseErrorCode { _ = try find([("where", #"{"$or":[{"title":"a"}]}"#)], limits: shallow) } == 102)
        #expect((try? find([("where", #"{"$or":[{"title":"a"}]}"#)])) != nil)
    }

    @Test func query_RejectsOversizedWhereAndValues_With102() {
        let huge = String(repeating: "a", count: 1 << 20)
        #expect(parseErrorCode { _ = try find([("where", #"{"title":"\#(huge)"}"#)]) } == 102)
        var limits = ParseLimits()
        limits.maxWhereBytes = 2 << 20
        #expect(parseErrorCode { _ = try find([("where", #"{"title":"\#(huge)"}"#)], limits: limits) } == 102)
        #expect(
            parseErrorCode { _ = try find([("where", #"{"title":{"$regex":"\#(huge)"}}"#)], limits: limits) } == 102)
        #expect(
            parseErrorCode {
                _ = try find([("where", #"{"title":{"$text":{"$search":{"$term":"\#(huge)"}}}}"#)], limits: limits)
            } == 102)
    }

    @Test func query_RejectsNULInValues() {
        #expect(parseErrorCode { _ = try find([("where", #"{"title":"a\u0000b"}"#)]) } == 102)
        #expect(parseErrorCode { _ = try find([("where", "{\"title\":\"a\u{0}b\"}")]) } == 102)
    }

    @Test func query_KeepsHostileStrings_AsBinds() throws {
        let query = try find([("where", #"{"title":"'; delete from photos where ''='"}"#)])
        #expect(
            query.condition == .compare(field: "title", op: .equal, value: .text("'; delete from photos where ''='")))
    }

    @Test func query_NeedsTextSearch_ForScore() throws {
        #expect(parseErrorCode { _ = try find([("order", "$score")]) } == 102)
        let twoTerms =
            #"{"$or":[{"title":{"$text":{"$search":{"$term":"a"}}}},{"tags":{"$text":{"$search":{"$term":"b"}}}}]}"#
        #expect(parseErrorCode { _ = try find([("where", twoTerms), ("order", "$score")]) } == 102)
        #expect((try? find([("where", twoTerms)])) != nil)
        let keysScore = try find([
            ("where", #"{"title":{"$text":{"$search":{"$term":"a"}}}}"#), ("keys", "title,$score"),
        ])
        #expect(keysScore.projection.includesScore)
    }
}
