import CivilCalendar
import Foundation

/// PostgreSQL's text formats for the values this layer binds and decodes: integers, timestamps and
/// one-dimensional arrays. Works on bytes, without Foundation formatters, because it runs for every
/// value of every row.
enum PostgresTextFormat {
    // MARK: Integers

    /// Appends `value` in decimal.
    static func appendInteger(_ value: Int64, to buffer: inout [UInt8]) {
        if value == 0 {
            buffer.append(UInt8(ascii: "0"))
            return
        }
        var magnitude = value.magnitude
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var count = 0
            while magnitude > 0 {
                digits[count] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: magnitude % 10)
                magnitude /= 10
                count += 1
            }
            if value < 0 { buffer.append(UInt8(ascii: "-")) }
            while count > 0 {
                count -= 1
                buffer.append(digits[count])
            }
        }
    }

    /// Reads a whole decimal integer (optional sign), or nil when the bytes are not one or overflow.
    static func parseInteger(_ bytes: UnsafeRawBufferPointer) -> Int64? {
        var index = 0
        var negative = false
        guard !bytes.isEmpty else { return nil }
        if bytes[0] == UInt8(ascii: "-") {
            negative = true
            index = 1
        } else if bytes[0] == UInt8(ascii: "+") {
            index = 1
        }
        guard index < bytes.count else { return nil }
        // Accumulate negatively so Int64.min parses.
        var result: Int64 = 0
        while index < bytes.count {
            let digit = bytes[index] &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            let (shifted, overflow1) = result.multipliedReportingOverflow(by: 10)
            let (next, overflow2) = shifted.subtractingReportingOverflow(Int64(digit))
            if overflow1 || overflow2 { return nil }
            result = next
            index += 1
        }
        if negative { return result }
        return result == .min ? nil : -result
    }

    // MARK: Timestamps

    /// Appends `date` as a `timestamptz` literal in UTC rounded to milliseconds,
    /// e.g. `2024-03-05 12:34:56.789+00`; years before 1 AD get PostgreSQL's ` BC` suffix.
    static func appendTimestamp(_ date: Date, to buffer: inout [UInt8]) {
        let seconds = date.timeIntervalSince1970
        // Beyond ±200,000 years PostgreSQL has no timestamp anyway; say infinity rather than trap.
        guard seconds.isFinite, abs(seconds) < 6.3e12 else {
            buffer.append(contentsOf: (seconds > 0 ? "infinity" : "-infinity").utf8)
            return
        }
        let milliseconds = Int64((seconds * 1000).rounded())
        let (days, millisecondOfDay) = floorDivide(milliseconds, 86_400_000)
        let civil = CivilDate(daysSince1970: days)
        let (year, month, day) = (civil.year, civil.month, civil.day)
        let displayYear = year > 0 ? year : 1 - year
        appendPadded(displayYear, width: 4, to: &buffer)
        buffer.append(UInt8(ascii: "-"))
        appendPadded(month, width: 2, to: &buffer)
        buffer.append(UInt8(ascii: "-"))
        appendPadded(day, width: 2, to: &buffer)
        buffer.append(UInt8(ascii: " "))
        appendPadded(millisecondOfDay / 3_600_000, width: 2, to: &buffer)
        buffer.append(UInt8(ascii: ":"))
        appendPadded(millisecondOfDay / 60_000 % 60, width: 2, to: &buffer)
        buffer.append(UInt8(ascii: ":"))
        appendPadded(millisecondOfDay / 1000 % 60, width: 2, to: &buffer)
        buffer.append(UInt8(ascii: "."))
        appendPadded(millisecondOfDay % 1000, width: 3, to: &buffer)
        buffer.append(contentsOf: "+00".utf8)
        if year <= 0 { buffer.append(contentsOf: " BC".utf8) }
    }

    /// Reads the ISO output of `timestamptz`, `timestamp` (taken as UTC) or `date` (midnight UTC):
    /// `YYYY-MM-DD[ HH:MM:SS[.ffffff]][±HH[:MM[:SS]]][ BC]`, or `infinity` / `-infinity`.
    static func parseTimestamp(_ bytes: UnsafeRawBufferPointer) -> Date? {
        let reader = ByteReader(bytes: bytes)
        if reader.rest == "infinity" { return .distantFuture }
        if reader.rest == "-infinity" { return .distantPast }
        guard let (days, microseconds) = parseTimestampParts(bytes) else { return nil }
        let whole = days * 86_400 + microseconds / 1_000_000
        return Date(timeIntervalSince1970: Double(whole) + Double(microseconds % 1_000_000) / 1_000_000)
    }

    /// The same text as microseconds since 1970 (UTC), exactly; nil for `±infinity`, anything
    /// malformed and dates past what 64 bits of microseconds hold (beyond the year 294,000).
    static func parseTimestampMicroseconds(_ bytes: UnsafeRawBufferPointer) -> Int64? {
        guard let (days, microseconds) = parseTimestampParts(bytes) else { return nil }
        let (product, overflow) = days.multipliedReportingOverflow(by: 86_400_000_000)
        guard !overflow else { return nil }
        let (sum, overflowed) = product.addingReportingOverflow(microseconds)
        return overflowed ? nil : sum
    }

    /// Days since 1970-01-01 and microseconds into that day (negative or past a day when a zone
    /// offset moves the time across midnight).
    private static func parseTimestampParts(_ bytes: UnsafeRawBufferPointer) -> (days: Int64, microseconds: Int64)? {
        if let parts = parseUTCTimestampParts(bytes) { return parts }
        var reader = ByteReader(bytes: bytes)
        guard var year = reader.number(minDigits: 4, maxDigits: 7), reader.skip("-"),
            let month = reader.number(minDigits: 2, maxDigits: 2), reader.skip("-"),
            let day = reader.number(minDigits: 2, maxDigits: 2)
        else { return nil }
        var microseconds: Int64 = 0
        if reader.skip(" ") && !reader.peek("B") {
            guard let hour = reader.number(minDigits: 2, maxDigits: 2), reader.skip(":"),
                let minute = reader.number(minDigits: 2, maxDigits: 2), reader.skip(":"),
                let second = reader.number(minDigits: 2, maxDigits: 2)
            else { return nil }
            microseconds = (hour * 3600 + minute * 60 + second) * 1_000_000
            if reader.skip(".") {
                var scale: Int64 = 100_000
                var digits = 0
                while let digit = reader.digit() {
                    microseconds += digit * scale
                    scale /= 10
                    digits += 1
                }
                guard digits > 0 else { return nil }
            }
            if reader.peek("+") || reader.peek("-") {
                let sign: Int64 = reader.skip("+") ? 1 : (reader.skip("-") ? -1 : 0)
                guard let offsetHours = reader.number(minDigits: 2, maxDigits: 2) else { return nil }
                var offset = offsetHours * 3600
                if reader.skip(":") {
                    guard let offsetMinutes = reader.number(minDigits: 2, maxDigits: 2) else { return nil }
                    offset += offsetMinutes * 60
                    if reader.skip(":") {
                        guard let offsetSeconds = reader.number(minDigits: 2, maxDigits: 2) else { return nil }
                        offset += offsetSeconds
                    }
                }
                microseconds -= sign * offset * 1_000_000
            }
            _ = reader.skip(" ")
        }
        if reader.skip("BC") { year = 1 - year }
        guard reader.atEnd, (1...12).contains(month), (1...31).contains(day) else { return nil }
        return (CivilDate(year: year, month: month, day: day).daysSince1970, microseconds)
    }

    /// `parseTimestampParts` for the shape a UTC session writes every `timestamptz` in,
    /// `YYYY-MM-DD HH:MM:SS[.f…]+00` (one to six fraction digits), read at fixed places: it is
    /// every row's `createdAt` and `updatedAt`. Nil for any other shape (the general reader's).
    private static func parseUTCTimestampParts(_ bytes: UnsafeRawBufferPointer) -> (days: Int64, microseconds: Int64)? {
        let count = bytes.count
        guard count >= 22, count <= 29, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
            bytes[10] == UInt8(ascii: " "), bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"),
            bytes[count - 3] == UInt8(ascii: "+"), bytes[count - 2] == UInt8(ascii: "0"),
            bytes[count - 1] == UInt8(ascii: "0"), count == 22 || (count >= 24 && bytes[19] == UInt8(ascii: "."))
        else { return nil }
        func digits(_ start: Int, _ end: Int) -> Int64? {
            var value: Int64 = 0
            for position in start..<end {
                let digit = bytes[position] &- UInt8(ascii: "0")
                guard digit < 10 else { return nil }
                value = value * 10 + Int64(digit)
            }
            return value
        }
        guard let year = digits(0, 4), let month = digits(5, 7), let day = digits(8, 10), let hour = digits(11, 13),
            let minute = digits(14, 16), let second = digits(17, 19), (1...12).contains(month), (1...31).contains(day)
        else { return nil }
        var microseconds = (hour * 3600 + minute * 60 + second) * 1_000_000
        if count > 22 {
            guard let fraction = digits(20, count - 3) else { return nil }
            var scale: Int64 = 1
            for _ in (count - 3 - 20)..<6 { scale *= 10 }
            microseconds += fraction * scale
        }
        return (CivilDate(year: year, month: month, day: day).daysSince1970, microseconds)
    }

    // MARK: Arrays

    /// Appends `{"a","b"}`: every element quoted, `"` and `\` escaped, so no element can be
    /// mistaken for NULL, a delimiter or a nested array.
    static func appendTextArray<S: Sequence>(_ elements: S, to buffer: inout [UInt8]) where S.Element: StringProtocol {
        buffer.append(UInt8(ascii: "{"))
        var first = true
        for element in elements {
            if !first { buffer.append(UInt8(ascii: ",")) }
            first = false
            buffer.append(UInt8(ascii: "\""))
            for byte in element.utf8 {
                if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { buffer.append(UInt8(ascii: "\\")) }
                buffer.append(byte)
            }
            buffer.append(UInt8(ascii: "\""))
        }
        buffer.append(UInt8(ascii: "}"))
    }

    /// Appends `{1,2,3}`.
    static func appendIntegerArray<S: Sequence>(_ elements: S, to buffer: inout [UInt8])
    where S.Element: BinaryInteger {
        buffer.append(UInt8(ascii: "{"))
        var first = true
        for element in elements {
            if !first { buffer.append(UInt8(ascii: ",")) }
            first = false
            appendInteger(Int64(element), to: &buffer)
        }
        buffer.append(UInt8(ascii: "}"))
    }

    /// Reads a one-dimensional array in PostgreSQL's output format (`{a,"b c",NULL}`, possibly with a
    /// `[lower:upper]=` prefix); nil elements are SQL NULLs. Returns nil for anything else, including
    /// multi-dimensional arrays.
    static func parseArray(_ bytes: UnsafeRawBufferPointer) -> [String?]? {
        var index = 0
        if bytes.first == UInt8(ascii: "[") {
            while index < bytes.count, bytes[index] != UInt8(ascii: "=") { index += 1 }
            index += 1
        }
        guard index < bytes.count, bytes[index] == UInt8(ascii: "{") else { return nil }
        index += 1
        var elements: [String?] = []
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            return index + 1 == bytes.count ? elements : nil
        }
        var scratch: [UInt8] = []
        while index < bytes.count {
            scratch.removeAll(keepingCapacity: true)
            var quoted = false
            if bytes[index] == UInt8(ascii: "\"") {
                quoted = true
                index += 1
                while index < bytes.count, bytes[index] != UInt8(ascii: "\"") {
                    if bytes[index] == UInt8(ascii: "\\") {
                        index += 1
                        guard index < bytes.count else { return nil }
                    }
                    scratch.append(bytes[index])
                    index += 1
                }
                guard index < bytes.count else { return nil }
                index += 1
            } else {
                while index < bytes.count, bytes[index] != UInt8(ascii: ","), bytes[index] != UInt8(ascii: "}") {
                    if bytes[index] == UInt8(ascii: "{") || bytes[index] == UInt8(ascii: "\"") { return nil }
                    if bytes[index] == UInt8(ascii: "\\") {
                        index += 1
                        guard index < bytes.count else { return nil }
                    }
                    scratch.append(bytes[index])
                    index += 1
                }
            }
            if !quoted, scratch.count == 4, scratch.map({ $0 | 0x20 }) == Array("null".utf8) {
                elements.append(nil)
            } else {
                elements.append(String(decoding: scratch, as: UTF8.self))
            }
            guard index < bytes.count else { return nil }
            if bytes[index] == UInt8(ascii: "}") { return index + 1 == bytes.count ? elements : nil }
            guard bytes[index] == UInt8(ascii: ",") else { return nil }
            index += 1
        }
        return nil
    }

    private static func floorDivide(_ a: Int64, _ b: Int64) -> (quotient: Int64, remainder: Int64) {
        var quotient = a / b
        var remainder = a % b
        if remainder < 0 {
            quotient -= 1
            remainder += b
        }
        return (quotient, remainder)
    }

    private static func appendPadded(_ value: Int64, width: Int, to buffer: inout [UInt8]) {
        var digits = 1
        var limit: Int64 = 10
        while value >= limit && digits < 19 {
            digits += 1
            limit *= 10
        }
        for _ in digits..<max(width, digits) { buffer.append(UInt8(ascii: "0")) }
        appendInteger(value, to: &buffer)
    }
}

/// A cursor over the bytes of one value, for the timestamp parser.
private struct ByteReader {
    let bytes: UnsafeRawBufferPointer
    var index = 0

    var atEnd: Bool { index == bytes.count }
    var rest: String { String(decoding: UnsafeRawBufferPointer(rebasing: bytes[index...]), as: UTF8.self) }

    func peek(_ character: Unicode.Scalar) -> Bool {
        index < bytes.count && bytes[index] == UInt8(ascii: character)
    }

    mutating func skip(_ text: StaticString) -> Bool {
        let count = text.utf8CodeUnitCount
        guard index + count <= bytes.count else { return false }
        for offset in 0..<count where bytes[index + offset] != text.utf8Start[offset] { return false }
        index += count
        return true
    }

    mutating func digit() -> Int64? {
        guard index < bytes.count else { return nil }
        let value = bytes[index] &- UInt8(ascii: "0")
        guard value < 10 else { return nil }
        index += 1
        return Int64(value)
    }

    mutating func number(minDigits: Int, maxDigits: Int) -> Int64? {
        var value: Int64 = 0
        var count = 0
        while count < maxDigits, let digit = digit() {
            value = value * 10 + digit
            count += 1
        }
        return count >= minDigits ? value : nil
    }
}
