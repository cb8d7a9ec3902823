import CivilCalendar
import Foundation

/// Parse's date format `YYYY-MM-DDTHH:MM:SS.mmmZ`: formatting without a `DateFormatter` (pure
/// integer arithmetic, fast enough for every row) and strict ISO 8601 parsing for `where` values.
public enum ParseDate {
    /// Milliseconds since 1970 for `date`, rounded to the nearest millisecond (the database
    /// stores milliseconds, so rounding undoes binary floating-point error).
    public static func milliseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded())
    }

    /// The date for milliseconds since 1970.
    public static func date(milliseconds: Int64) -> Date {
        Date(timeIntervalSince1970: Double(milliseconds) / 1000)
    }

    /// The length of `YYYY-MM-DDTHH:MM:SS.mmmZ`.
    public static var length: Int { 24 }

    /// `date` as `YYYY-MM-DDTHH:MM:SS.mmmZ`.
    public static func format(_ date: Date) -> String {
        String(unsafeUninitializedCapacity: length) { buffer in
            write(milliseconds: milliseconds(date), to: buffer.baseAddress!)
            return length
        }
    }

    /// Writes the UTC date `YYYY-MM-DDTHH:MM:SS.mmmZ` for `milliseconds` since 1970 into the
    /// `length` bytes at `out`, each digit in place. Years outside 0…9999 are clamped to that
    /// range's representation as 4 digits.
    public static func write(milliseconds: Int64, to out: UnsafeMutablePointer<UInt8>) {
        let msPerDay: Int64 = 86_400_000
        var days = milliseconds / msPerDay
        var msOfDay = milliseconds % msPerDay
        if msOfDay < 0 {
            msOfDay += msPerDay
            days -= 1
        }
        let civil = CivilDate(daysSince1970: days)
        let year = Int(max(0, min(9999, civil.year)))
        writeTwoDigits(year / 100, to: out)
        writeTwoDigits(year % 100, to: out + 2)
        out[4] = UInt8(ascii: "-")
        writeTwoDigits(Int(civil.month), to: out + 5)
        out[7] = UInt8(ascii: "-")
        writeTwoDigits(Int(civil.day), to: out + 8)
        out[10] = UInt8(ascii: "T")
        let totalSeconds = Int(msOfDay / 1000)
        writeTwoDigits(totalSeconds / 3600, to: out + 11)
        out[13] = UInt8(ascii: ":")
        writeTwoDigits(totalSeconds / 60 % 60, to: out + 14)
        out[16] = UInt8(ascii: ":")
        writeTwoDigits(totalSeconds % 60, to: out + 17)
        out[19] = UInt8(ascii: ".")
        let millisecond = Int(msOfDay % 1000)
        out[20] = UInt8(ascii: "0") + UInt8(millisecond / 100)
        writeTwoDigits(millisecond % 100, to: out + 21)
        out[23] = UInt8(ascii: "Z")
    }

    /// Writes `value` (0…99) as two digits.
    @inline(__always)
    private static func writeTwoDigits(_ value: Int, to out: UnsafeMutablePointer<UInt8>) {
        out[0] = UInt8(ascii: "0") + UInt8(value / 10)
        out[1] = UInt8(ascii: "0") + UInt8(value % 10)
    }

    /// Parses an ISO 8601 date as Parse clients send it: `YYYY-MM-DD` (midnight UTC) or
    /// `YYYY-MM-DDTHH:MM[:SS[.fraction]]` followed by `Z` or `±HH:MM` / `±HHMM`. Returns
    /// milliseconds since 1970 (fractions beyond milliseconds are truncated, as JavaScript does),
    /// or nil when the text is not such a date or names an impossible day or time.
    public static func parseMilliseconds(_ text: String) -> Int64? {
        let b = Array(text.utf8)
        var i = 0
        func number(_ count: Int) -> Int64? {
            guard i + count <= b.count else { return nil }
            var value: Int64 = 0
            for k in 0..<count {
                let c = b[i + k]
                guard c >= 48 && c <= 57 else { return nil }
                value = value * 10 + Int64(c - 48)
            }
            i += count
            return value
        }
        func expect(_ c: Character) -> Bool {
            guard i < b.count, b[i] == c.asciiValue! else { return false }
            i += 1
            return true
        }
        guard let year = number(4), expect("-"), let month = number(2), expect("-"), let day = number(2) else {
            return nil
        }
        let civil = CivilDate(year: year, month: month, day: day)
        guard civil.isValid else { return nil }
        var ms = civil.daysSince1970 * 86_400_000
        if i == b.count { return ms }
        guard expect("T") || expect(" ") else { return nil }
        guard let hour = number(2), expect(":"), let minute = number(2), hour < 24, minute < 60 else { return nil }
        var second: Int64 = 0
        var millis: Int64 = 0
        if expect(":") {
            guard let s = number(2), s < 60 else { return nil }
            second = s
            if expect(".") {
                var digits = 0
                while i < b.count, b[i] >= 48 && b[i] <= 57 {
                    if digits < 3 { millis = millis * 10 + Int64(b[i] - 48) }
                    digits += 1
                    i += 1
                }
                guard digits >= 1, digits <= 9 else { return nil }
                var padded = digits
                while padded < 3 {
                    millis *= 10
                    padded += 1
                }
            }
        }
        ms += ((hour * 60 + minute) * 60 + second) * 1000 + millis
        if expect("Z") {
            return i == b.count ? ms : nil
        }
        guard i < b.count, b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-") else { return nil }
        let sign: Int64 = b[i] == UInt8(ascii: "+") ? 1 : -1
        i += 1
        guard let offsetHours = number(2), offsetHours <= 23 else { return nil }
        _ = expect(":")
        guard let offsetMinutes = number(2), offsetMinutes < 60, i == b.count else { return nil }
        ms -= sign * (offsetHours * 60 + offsetMinutes) * 60_000
        return ms
    }

    /// Like `parseMilliseconds`, as a `Date`.
    public static func parse(_ text: String) -> Date? {
        parseMilliseconds(text).map(date(milliseconds:))
    }
}
