import Testing

@testable import GalleryApp

/// Parse Server's naming rules (`SchemaController.classNameIsValid`, `fieldNameIsValid`).
@Suite struct ParseClassNameTests {
    @Test func names_FollowParseServer() {
        for valid in ["Resource", "EXIF", "a", "Comment_2", "x" + String(repeating: "y", count: 99)] {
            #expect(ParseClassName.isValidClassName(valid), "\(valid)")
        }
        for invalid in [
            "", "_User", "_Secret", "9lives", "bad-name", "with space", "Ünïcode", "a;drop",
            "x" + String(repeating: "y", count: 100),
        ] {
            #expect(!ParseClassName.isValidClassName(invalid), "\(invalid)")
        }
        #expect(ParseClassName.isValidFieldName("thumbnailURLString"))
        #expect(!ParseClassName.isValidFieldName("className") && !ParseClassName.isValidFieldName("length"))
        #expect(!ParseClassName.isValidFieldName("_rperm") && !ParseClassName.isValidFieldName("a.b"))
        #expect(
            ParseClassName.invalidClassNameError("9x").code == 103
                && ParseClassName.invalidFieldNameError("a-b").code == 105)
    }

    @Test func fieldTypes_ParsedAsParseServerChecksThem() throws {
        func parse(_ json: String) throws -> CustomFieldType {
            try CustomFieldType.parse(try ParseJSONParser.parse(Array(json.utf8), maxDepth: 8), field: "f")
        }
        #expect(
            try parse(#"{"type":"Pointer","targetClass":"_User"}"#) == CustomFieldType(.pointer, targetClass: "_User"))
        #expect(try parse(#"{"type":"GeoPoint"}"#).sqlType == "jsonb")
        #expect(try parse(#"{"type":"Relation","targetClass":"Photo"}"#).sqlType == nil)
        #expect(throws: ParseError.self) { try parse(#"{"type":"Integer"}"#) }
        #expect((try? parse(#"{"type":"Pointer"}"#)) == nil)
        for (json, code) in [
            (#"{"type":"Integer"}"#, 111), (#"{"type":"Pointer"}"#, 135),
            (#"{"type":"Pointer","targetClass":"9"}"#, 103),
            (#""String""#, 107), (#"{"type":"String","targetClass":"X"}"#, 107),
        ] {
            do {
                _ = try parse(json)
                Issue.record("\(json) parsed")
            } catch let error as ParseError {
                #expect(error.code == code, "\(json)")
            }
        }
    }
}
