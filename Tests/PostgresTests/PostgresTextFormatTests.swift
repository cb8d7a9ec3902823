import Foundation
import Testing

@testable import Postgres

/// The byte-level codecs, without a server.
@Suite struct PostgresTextFormatTests {
    private func text(_ encode: (inout [UInt8]) -> Void) -> String {
        var buffer: [UInt8] = []
        encode(&buffer)
        return String(decoding: buffer, as: UTF8.self)
    }

    private func parse<T>(_ string: String, _ parser: (UnsafeRawBufferPointer) -> T) -> T {
        Array(string.utf8).withUnsafeBytes { parser($0) }
    }

    @Test func timestamp_IsWrittenInUTCWithMilliseconds() {
        let date = Date(timeIntervalSince1970: 1_709_642_096.7894)
        #expect(text { PostgresTextFormat.appendTimestamp(date, to: &$0) } == "2024-03-05 12:34:56.789+00")
        #expect(
            text { PostgresTextFormat.appendTimestamp(Date(timeIntervalSince1970: -1.5), to: &$0) }
                == "1969-12-31 23:59:58.500+00")
    }

    @Test func timestamp_BeforeYearOne_GetsBCSuffix() {
        // 0001-01-01 00:00:00 is -62135596800; one day earlier is 31 Dec of 1 BC.
        let date = Date(timeIntervalSince1970: -62_135_596_800 - 86_400)
        #expect(text { PostgresTextFormat.appendTimestamp(date, to: &$0) } == "0001-12-31 00:00:00.000+00 BC")
        #expect(parse("0001-12-31 00:00:00+00 BC", PostgresTextFormat.parseTimestamp) == date)
    }

    @Test func timestamp_ParsesOffsetsFractionsAndDates() {
        let base = Date(timeIntervalSince1970: 1_709_642_096)
        #expect(parse("2024-03-05 12:34:56+00", PostgresTextFormat.parseTimestamp) == base)
        #expect(parse("2024-03-05 14:34:56+02", PostgresTextFormat.parseTimestamp) == base)
        #expect(parse("2024-03-05 07:04:56-05:30", PostgresTextFormat.parseTimestamp) == base)
        #expect(parse("2024-03-05 12:34:56.25+00", PostgresTextFormat.parseTimestamp) == base.addingTimeInterval(0.25))
        #expect(parse("2024-03-05 12:34:56", PostgresTextFormat.parseTimestamp) == base)
        #expect(parse("2024-03-05", PostgresTextFormat.parseTimestamp) == Date(timeIntervalSince1970: 1_709_596_800))
        #expect(parse("infinity", PostgresTextFormat.parseTimestamp) == .distantFuture)
        #expect(parse("2024-13-05", PostgresTextFormat.parseTimestamp) == nil)
        #expect(parse("2024-03-05 12:34", PostgresTextFormat.parseTimestamp) == nil)
        #expect(parse("2024-03-05 12:34:56+00junk", PostgresTextFormat.parseTimestamp) == nil)
    }

    @Test func timestamp_UTCShapeReadAtFixedPlaces_MatchesTheGeneralReader() {
        let days = ["1900-01-01", "1969-12-31", "1970-01-01", "2000-02-29", "2024-05-06", "9999-12-31"]
        let fractions = ["", ".5", ".25", ".125", ".1235", ".12345", ".123456", ".1234567"]
        for day in days {
            for fraction in fractions {
                let utc = "\(day) 23:59:58\(fraction)+00"
                let general = "\(day) 23:59:58\(fraction)+00:00"  // another shape: the general reader
                let micros = parse(utc, PostgresTextFormat.parseTimestampMicroseconds)
                #expect(micros != nil, "\(utc)")
                #expect(micros == parse(general, PostgresTextFormat.parseTimestampMicroseconds), "\(utc)")
            }
        }
        for junk in [
            "2024-13-05 12:34:56+00", "2024-03-00 12:34:56+00", "2024-03-0x 12:34:56+00", "2024-03-05 12:34:56.+00",
            "2024-03-05 12:34:5x.1+00", "2024-03-05 12:34:56.1x+00",
        ] {
            #expect(parse(junk, PostgresTextFormat.parseTimestampMicroseconds) == nil, "\(junk)")
        }
    }

    @Test func integer_ParsesExtremesAndRejectsJunk() {
        #expect(parse("9223372036854775807", PostgresTextFormat.parseInteger) == .max)
        #expect(parse("-9223372036854775808", PostgresTextFormat.parseInteger) == .min)
        #expect(parse("9223372036854775808", PostgresTextFormat.parseInteger) == nil)
        #expect(parse("12a", PostgresTextFormat.parseInteger) == nil)
        #expect(parse("-", PostgresTextFormat.parseInteger) == nil)
        #expect(parse("", PostgresTextFormat.parseInteger) == nil)
        #expect(text { PostgresTextFormat.appendInteger(.min, to: &$0) } == "-9223372036854775808")
    }

    @Test func array_QuotesEveryElement() {
        let elements = ["a", "b c", "\"q\"", "back\\slash", "NULL", "", "{x,y}"]
        #expect(
            text { PostgresTextFormat.appendTextArray(elements, to: &$0) }
                == #"{"a","b c","\"q\"","back\\slash","NULL","","{x,y}"}"#)
    }

    @Test func array_ParsesServerOutput() {
        #expect(
            parse(#"{a,"b c","\"q\"","back\\slash",NULL,"NULL",""}"#, PostgresTextFormat.parseArray)
                == ["a", "b c", "\"q\"", "back\\slash", nil, "NULL", ""])
        #expect(parse("{}", PostgresTextFormat.parseArray) == [])
        #expect(parse("[0:1]={1,2}", PostgresTextFormat.parseArray) == ["1", "2"])
        #expect(parse("{{1,2},{3,4}}", PostgresTextFormat.parseArray) == nil)
        #expect(parse("{1,2", PostgresTextFormat.parseArray) == nil)
    }
}
