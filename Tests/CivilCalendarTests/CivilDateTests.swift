import CivilCalendar
import Testing

/// The calendar arithmetic that Postgres, Parse and EXIF dates all use, tested here once.
@Suite struct CivilDateTests {
    @Test func civilDate_RoundTripsEveryDayAcrossEras() {
        for days in stride(from: Int64(-800_000), through: 800_000, by: 97) {
            let date = CivilDate(daysSince1970: days)
            #expect(date.isValid)
            #expect(date.daysSince1970 == days)
        }
    }

    @Test func civilDate_RoundTripsEveryDay_AroundTheEpochAndLeapDays() {
        var previous = CivilDate(daysSince1970: -1)
        #expect(previous == CivilDate(year: 1969, month: 12, day: 31))
        for days in Int64(0)...Int64(366 * 4 * 2) {
            let date = CivilDate(daysSince1970: days)
            #expect(date.daysSince1970 == days)
            // Consecutive days: the next day of the month, or the first of the next month.
            let next =
                previous.day < CivilDate.daysInMonth(year: previous.year, month: previous.month)
                ? CivilDate(year: previous.year, month: previous.month, day: previous.day + 1)
                : (previous.month == 12
                    ? CivilDate(year: previous.year + 1, month: 1, day: 1)
                    : CivilDate(year: previous.year, month: previous.month + 1, day: 1))
            #expect(date == next)
            previous = date
        }
    }

    @Test func civilDate_KnownDays() {
        #expect(CivilDate(year: 1970, month: 1, day: 1).daysSince1970 == 0)
        #expect(CivilDate(year: 2000, month: 3, day: 1).daysSince1970 == 11_017)
        #expect(CivilDate(year: 2024, month: 3, day: 5).daysSince1970 == 19_787)
        #expect(CivilDate(year: 0, month: 12, day: 31).daysSince1970 == -719_163)  // 1 BC, the day before 0001-01-01
        #expect(CivilDate(daysSince1970: 2_932_896) == CivilDate(year: 9999, month: 12, day: 31))
    }

    @Test func civilDate_ValidatesMonthsAndLeapDays() {
        #expect(CivilDate(year: 2024, month: 2, day: 29).isValid)
        #expect(CivilDate(year: 2000, month: 2, day: 29).isValid)
        #expect(!CivilDate(year: 2023, month: 2, day: 29).isValid)
        #expect(!CivilDate(year: 1900, month: 2, day: 29).isValid)
        #expect(!CivilDate(year: 2024, month: 4, day: 31).isValid)
        #expect(!CivilDate(year: 2024, month: 13, day: 1).isValid)
        #expect(!CivilDate(year: 2024, month: 0, day: 1).isValid)
        #expect(!CivilDate(year: 2024, month: 1, day: 0).isValid)
        #expect(CivilDate.isLeapYear(0))
        #expect(!CivilDate.isLeapYear(-1))
    }
}
