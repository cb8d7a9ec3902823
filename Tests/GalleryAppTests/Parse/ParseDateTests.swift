import Foundation
import Testing

@testable import GalleryApp

/// Fast date formatting and strict ISO parsing.
@Suite struct ParseDateTests {
    @Test func date_FormatsMilliseconds_InParseFormat() {
        #expect(ParseDate.format(Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00.000Z")
        #expect(ParseDate.format(Date(timeIntervalSince1970: 1_704_164_645.678)) == "2024-01-02T03:04:05.678Z")
        #expect(ParseDate.format(Date(timeIntervalSince1970: -0.001)) == "1969-12-31T23:59:59.999Z")
        #expect(ParseDate.format(Date(timeIntervalSince1970: 951_782_400)) == "2000-02-29T00:00:00.000Z")
        #expect(ParseDate.format(Date(timeIntervalSince1970: 253_402_300_799.999)) == "9999-12-31T23:59:59.999Z")
        // Years past 9999 are clamped to four digits.
        #expect(ParseDate.format(Date(timeIntervalSince1970: 253_402_300_800)) == "9999-01-01T00:00:00.000Z")
    }

    @Test func date_RoundTripsThroughParse_ForManyInstants() {
        var generator = SystemRandomNumberGenerator()
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        formatter.timeZone = TimeZone(identifier: "UTC")
        for _ in 0..<2000 {
            let ms = Int64.random(in: -62_135_596_800_000...253_402_300_799_999, using: &generator)
            let text = ParseDate.format(ParseDate.date(milliseconds: ms))
            #expect(ParseDate.parseMilliseconds(text) == ms, "\(text)")
            #expect(ParseDate.milliseconds(ParseDate.date(milliseconds: ms)) == ms)
            if ms > 0 {
                #expect(formatter.string(from: ParseDate.date(milliseconds: ms)) == text)
            }
        }
    }

    @Test func date_ParsesISOVariants() {
        #expect(ParseDate.parseMilliseconds("2024-01-02") == 1_704_153_600_000)
        #expect(ParseDate.parseMilliseconds("2024-01-02T03:04Z") == 1_704_164_640_000)
        #expect(ParseDate.parseMilliseconds("2024-01-02T03:04:05Z") == 1_704_164_645_000)
        #expect(ParseDate.parseMilliseconds("2024-01-02T03:04:05.6Z") == 1_704_164_645_600)
        #expect(ParseDate.parseMilliseconds("2024-01-02T03:04:05.678999Z") == 1_704_164_645_678)
        #expect(ParseDate.parseMilliseconds("2024-01-02T05:04:05.678+02:00") == 1_704_164_645_678)
        #expect(ParseDate.parseMilliseconds("2024-01-01T22:04:05.678-0500") == 1_704_164_645_678)
    }

    @Test func date_RejectsImpossibleOrSloppyDates() {
        for text in [
            "", "2024", "2024-1-02", "2024-13-01", "2024-02-30", "2023-02-29T00:00:00Z", "2024-01-02T24:00:00Z",
            "2024-01-02T03:60:00Z",
            "2024-01-02T03:04:60Z", "2024-01-02T03:04:05", "2024-01-02T03:04:05.Z", "2024-01-02T03:04:05.1234567890Z",
            "2024-01-02T03:04:05Zjunk", "2024-01-02T03:04:05+25:00", "２０２４-01-02", "2024-01-02T03:04:05.678z",
        ] {
            #expect(ParseDate.parseMilliseconds(text) == nil, "\(text)")
        }
    }
}
