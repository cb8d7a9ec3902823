/// A day of the proleptic Gregorian calendar (the one PostgreSQL, EXIF and ISO 8601 use), with
/// astronomical years: year 0 is 1 BC. The one copy of galleryd's calendar arithmetic (Howard
/// Hinnant's `days_from_civil` and `civil_from_days`), shared by the PostgreSQL text format, Parse
/// dates and EXIF dates. Pure integer arithmetic, exact over ±25 million years, no `Calendar`,
/// no time zones: fast enough for every timestamp of every row.
public struct CivilDate: Hashable, Sendable {
    /// Astronomical year (0 = 1 BC, −1 = 2 BC).
    public var year: Int64
    /// Month 1…12.
    public var month: Int64
    /// Day of the month 1…31.
    public var day: Int64

    /// The date with these parts, unchecked (see `isValid`).
    @inlinable
    public init(year: Int64, month: Int64, day: Int64) {
        self.year = year
        self.month = month
        self.day = day
    }

    /// The date `daysSince1970` days after 1970-01-01 (negative for earlier ones).
    @inlinable
    public init(daysSince1970 days: Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        day = dayOfYear - (153 * mp + 2) / 5 + 1
        month = mp < 10 ? mp + 3 : mp - 9
        year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
    }

    /// Days since 1970-01-01 (negative before it). For a date that is not valid the count runs on
    /// past the month's end (2023-02-30 counts as 2023-03-02), as `isValid` exists to rule out.
    @inlinable
    public var daysSince1970: Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// Whether the month is 1…12 and the day exists in it (29 February only in leap years).
    @inlinable
    public var isValid: Bool {
        (1...12).contains(month) && day >= 1 && day <= Self.daysInMonth(year: year, month: month)
    }

    /// Whether `year` (astronomical) has a 29 February.
    @inlinable
    public static func isLeapYear(_ year: Int64) -> Bool {
        year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
    }

    /// The number of days of `month` (1…12) in `year`; 31 for a month out of range.
    @inlinable
    public static func daysInMonth(year: Int64, month: Int64) -> Int64 {
        switch month {
        case 2: return isLeapYear(year) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }
}
