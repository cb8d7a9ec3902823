import Foundation
import Testing

@testable import GalleryApp

/// The strict JSON parser and the fast writer.
@Suite struct ParseJSONTests {
    private func parse(_ text: String, depth: Int = 16) throws -> ParseJSONValue {
        try ParseJSONParser.parse(text, maxDepth: depth)
    }

    @Test func parser_KeepsIntegersDoublesAndBooleansApart() throws {
        #expect(try parse("1") == .int(1))
        #expect(try parse("-0") == .int(0))
        #expect(try parse("1.0") == .double(1.0))
        #expect(try parse("1e2") == .double(100))
        #expect(try parse("9223372036854775807") == .int(Int64.max))
        #expect(try parse("9223372036854775808") == .double(9_223_372_036_854_775_808))
        #expect(try parse(" true ") == .bool(true))
        #expect(try parse("null") == .null)
        #expect(
            try parse(#"{"a":[1,"x",{}]}"#)
                == .object(
                    ParseJSONObject([
                        .init(key: "a", value: .array([.int(1), .string("x"), .object(ParseJSONObject())]))
                    ])))
    }

    @Test func parser_DecodesEscapesAndSurrogatePairs() throws {
        #expect(try parse(#""a\"\\\/\b\f\n\r\t\u00e9\ud83c\udf05""#) == .string("a\"\\/\u{8}\u{c}\n\r\té🌅"))
    }

    @Test func parser_RejectsWhatJSONSerializationMightAccept_With107() {
        let bad: [[UInt8]] = [
            Array(#"{"a":1,"a":2}"#.utf8), Array(#""\ud800""#.utf8), Array(#""\udc00x""#.utf8),
            Array(#""\u0000""#.utf8),
            [0x22, 0xFF, 0x22], [0x22, 0xC3, 0x28, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22], [0x22, 0x01, 0x22],
            Array("01".utf8),
            Array("1.".utf8), Array(".5".utf8), Array("+1".utf8), Array("1e".utf8), Array("NaN".utf8),
            Array("1e400".utf8),
            Array("[1,]".utf8), Array(#"{"a":1,}"#.utf8), Array("tru".utf8), Array("[1] [2]".utf8),
            [0xEF, 0xBB, 0xBF] + Array("{}".utf8),
            Array("'a'".utf8), Array("".utf8),
        ]
        for bytes in bad {
            #expect(parseErrorCode { _ = try ParseJSONParser.parse(bytes, maxDepth: 16) } == 107, "\(bytes)")
        }
    }

    @Test func parser_RejectsNestingBeyondTheLimit_With102() {
        #expect(parseErrorCode { _ = try parse("[[[1]]]", depth: 2) } == 102)
        #expect((try? parse("[[1]]", depth: 2)) == .array([.array([.int(1)])]))
        #expect(
            parseErrorCode { _ = try parse(String(repeating: "[", count: 1000) + String(repeating: "]", count: 1000)) }
                == 102)
    }

    @Test func writer_EscapesQuotesBackslashesAndControlCharacters() {
        var writer = ParseJSONWriter()
        writer.beginObject()
        writer.key("k\"")
        writer.string("a\"b\\c\n\r\t\u{8}\u{c}\u{0}\u{1f}\u{7f}é🌅\u{2028}")
        writer.key("n")
        writer.beginArray()
        writer.int(-12)
        writer.double(0.5)
        writer.double(.nan)
        writer.bool(false)
        writer.null()
        writer.endArray()
        writer.endObject()
        let text = String(decoding: writer.bytes, as: UTF8.self)
        #expect(
            text == #"{"k\"":"a\"b\\c\n\r\t\b\f\u0000\u001f"# + "\u{7f}é🌅\u{2028}"
                + #"","n":[-12,0.5,null,false,null]}"#)
        // Valid JSON (our own parser refuses the \u0000 on purpose, so ask Foundation).
        #expect((try? JSONSerialization.jsonObject(with: Data(writer.bytes))) != nil)
    }

    @Test func writer_RoundTripsEveryControlCharacter_ThroughTheParser() throws {
        let all = String(String.UnicodeScalarView((1...0x7f).compactMap(Unicode.Scalar.init))) + "\u{10FFFF}\u{FFFD}"
        var writer = ParseJSONWriter()
        writer.string(all)
        #expect(try ParseJSONParser.parse(writer.bytes, maxDepth: 1) == .string(all))
        let foundation =
            try JSONSerialization.jsonObject(with: Data(writer.bytes), options: [.fragmentsAllowed]) as? String
        #expect(foundation == all)
    }

    @Test func writer_WritesIntegersAsSwiftDoes_AtEveryDigitCount() {
        var values: [Int64] = [0, 9, 10, -1, -9, -10, .max, .min, .max - 1, .min + 1]
        var power: Int64 = 1
        for _ in 0..<18 {
            power *= 10
            values += [power - 1, power, power + 1, -(power - 1), -power, -(power + 1)]
        }
        var writer = ParseJSONWriter(capacity: 1)  // grows as it goes
        writer.beginArray()
        for value in values { writer.int(value) }
        writer.endArray()
        #expect(
            String(decoding: writer.bytes, as: UTF8.self) == "[" + values.map(String.init).joined(separator: ",") + "]")
    }

    @Test func writer_CopiesKeepTheirOwnBytes() {
        var first = ParseJSONWriter(capacity: 256)
        first.beginArray()
        first.string("shared")
        var second = first  // both would write at the same place of one buffer
        first.string("first")
        second.int(2)
        first.endArray()
        second.endArray()
        #expect(String(decoding: first.bytes, as: UTF8.self) == #"["shared","first"]"#)
        #expect(String(decoding: second.bytes, as: UTF8.self) == #"["shared",2]"#)
    }

    @Test func writer_LiteralsAndLentBytes_WriteWhatTheEscapingCallsWrite() {
        var literal = ParseJSONWriter(capacity: 1)
        literal.beginObject(type: "File")
        literal.key(ascii: "url")
        literal.string(ascii: "x")
        var escaped = ParseJSONWriter()
        escaped.beginObject()
        escaped.key("__type")
        escaped.string("File")
        escaped.key("url")
        escaped.string("x")
        let lent: [UInt8] = Array("a\"b".utf8)
        lent.withUnsafeBufferPointer { bytes in
            literal.key(ascii: "lent")
            literal.string(utf8: bytes)
            literal.key(ascii: "joined")
            literal.string(utf8: bytes, prefix: Array("p\\".utf8), infix: Array("i/".utf8))
            escaped.key("lent")
            escaped.string("a\"b")
            escaped.key("joined")
            escaped.string("p\\i/a\"b")
        }
        literal.endObject()
        escaped.endObject()
        #expect(literal.bytes == escaped.bytes)
        #expect(
            String(decoding: literal.bytes, as: UTF8.self)
                == #"{"__type":"File","url":"x","lent":"a\"b","joined":"p\\i/a\"b"}"#)
    }

    @Test func quoted_IsTheWritersStringLiteral() throws {
        let text = "say \"hi\"\\\n\u{1}é"
        var writer = ParseJSONWriter()
        writer.string(text)
        #expect(ParseJSONWriter.quoted(text) == String(decoding: writer.bytes, as: UTF8.self))
        #expect(ParseJSONWriter.quoted(text) == #""say \"hi\"\\\n\u0001é""#)
        #expect(try ParseJSONParser.parse(ParseJSONWriter.quoted(text), maxDepth: 1) == .string(text))
    }

    @Test func error_MapsCodesToHTTPStatus_AndWritesParseBody() {
        #expect(ParseError.objectNotFound().httpStatusCode == 404)
        #expect(ParseError.internalServerError().httpStatusCode == 500)
        #expect(ParseError.invalidQuery("x").httpStatusCode == 400)
        #expect(ParseError.duplicateValue("x").httpStatus == .badRequest)
        #expect(ParseError.objectNotFound().httpStatus == .notFound)
        #expect(ParseError(code: ParseError.Code.scriptFailed, message: "x").httpStatusCode == 400)
        #expect(
            String(decoding: ParseError.invalidQuery("bad \"q\"").jsonBody, as: UTF8.self)
                == #"{"code":102,"error":"bad \"q\""}"#)
    }
}
