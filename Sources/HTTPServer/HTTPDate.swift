import Foundation

/// The `Date` header value (RFC 9110 §5.6.7 IMF-fixdate), formatted at most once per second per
/// event loop: formatting dates is surprisingly expensive and every response carries one.
struct HTTPDate {
    private var second = -1
    private(set) var bytes: [UInt8] = []

    private static let days: [String] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months: [String] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ]

    /// The formatted current time, e.g. `Sun, 06 Nov 1994 08:49:37 GMT`.
    mutating func current() -> [UInt8] {
        let now = time(nil)
        if now != second {
            second = now
            bytes = Array(Self.format(now).utf8)
        }
        return bytes
    }

    private static let dayLetters: StaticString = "SunMonTueWedThuFriSat"
    private static let monthLetters: StaticString = "JanFebMarAprMayJunJulAugSepOctNovDec"
    private static let gmtLetters: StaticString = "GMT"
    private static let separators: [(Int, UInt8)] =
        ([
            (3, ","), (4, " "), (7, " "), (11, " "), (16, " "), (19, ":"), (22, ":"), (25, " "),
        ] as [(Int, Unicode.Scalar)]).map { ($0.0, UInt8(ascii: $0.1)) }

    /// Formats seconds since 1970 as IMF-fixdate. Written byte by byte into one 29-byte string:
    /// every file response carries a Last-Modified, so this is on the hot path.
    static func format(_ seconds: Int) -> String {
        var t = time_t(seconds)
        var tm = SystemCalls.BrokenDownTime()
        gmtime_r(&t, &tm)
        let year = Int(tm.tm_year) + 1900
        guard (0...9999).contains(year) else {
            // Outside four digits the fixed layout does not hold; not reachable for real file times.
            func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
            return "\(days[Int(tm.tm_wday)]), \(two(tm.tm_mday)) \(months[Int(tm.tm_mon)]) \(year) "
                + "\(two(tm.tm_hour)):\(two(tm.tm_min)):\(two(tm.tm_sec)) GMT"
        }
        return String(unsafeUninitializedCapacity: 29) { out in
            func text(_ letters: UnsafePointer<UInt8>, at i: Int) {
                for k in 0..<3 { out[i + k] = letters[k] }
            }
            func two(_ n: Int32, at i: Int) {
                out[i] = UInt8(truncatingIfNeeded: 0x30 + n / 10)
                out[i + 1] = UInt8(truncatingIfNeeded: 0x30 + n % 10)
            }
            // `Sun, 06 Nov 1994 08:49:37 GMT`: the separators first, then the fields into their places.
            for (i, byte) in separators { out[i] = byte }
            text(dayLetters.utf8Start + 3 * Int(tm.tm_wday), at: 0)
            two(tm.tm_mday, at: 5)
            text(monthLetters.utf8Start + 3 * Int(tm.tm_mon), at: 8)
            two(Int32(year / 100), at: 12)
            two(Int32(year % 100), at: 14)
            two(tm.tm_hour, at: 17)
            two(tm.tm_min, at: 20)
            two(tm.tm_sec, at: 23)
            text(gmtLetters.utf8Start, at: 26)
            return 29
        }
    }

    /// Parses an IMF-fixdate (the only form senders may generate, RFC 9110 §5.6.7); obsolete
    /// forms and anything malformed give nil, which callers treat as an absent header.
    static func parse(_ text: String) -> Date? {
        let parts = text.trimmingSpaces().split(separator: " ")
        guard parts.count == 6, parts[5] == "GMT", parts[0].hasSuffix(","),
            let day = Int(parts[1]), let monthIndex = months.firstIndex(of: String(parts[2])), let year = Int(parts[3])
        else { return nil }
        let hms = parts[4].split(separator: ":")
        guard hms.count == 3, let h = Int(hms[0]), let m = Int(hms[1]), let s = Int(hms[2]),
            (1...31).contains(day), (0...23).contains(h), (0...59).contains(m), (0...60).contains(s),
            // year = 4DIGIT (RFC 9110 §5.6.7); a longer one would trap converting to tm's Int32.
            (1970...9999).contains(year)
        else { return nil }
        var tm = SystemCalls.BrokenDownTime()
        tm.tm_year = Int32(year - 1900)
        tm.tm_mon = Int32(monthIndex)
        tm.tm_mday = Int32(day)
        tm.tm_hour = Int32(h)
        tm.tm_min = Int32(m)
        tm.tm_sec = Int32(s)
        let t = timegm(&tm)
        return t < 0 ? nil : Date(timeIntervalSince1970: TimeInterval(t))
    }
}
