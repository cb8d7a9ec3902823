import Foundation

/// The `Date` header value (RFC 9110 §5.6.7 IMF-fixdate), formatted at most once per second per
/// event loop: formatting dates is surprisingly expensive and every response carries one.
struct HTTPDate {
    private var second = -1
    private(set) var bytes: [UInt8] = []

    private static let days: [String] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months: [String] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// The formatted current time, e.g. `Sun, 06 Nov 1994 08:49:37 GMT`.
    mutating func current() -> [UInt8] {
        let now = time(nil)
        if now != second {
            second = now
            bytes = Array(Self.format(now).utf8)
        }
        return bytes
    }

    /// Formats seconds since 1970 as IMF-fixdate.
    static func format(_ seconds: Int) -> String {
        var t = time_t(seconds)
        var tm = Glibc.tm()
        gmtime_r(&t, &tm)
        func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(days[Int(tm.tm_wday)]), \(two(tm.tm_mday)) \(months[Int(tm.tm_mon)]) \(tm.tm_year + 1900) "
            + "\(two(tm.tm_hour)):\(two(tm.tm_min)):\(two(tm.tm_sec)) GMT"
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
        var tm = Glibc.tm()
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
