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
}
