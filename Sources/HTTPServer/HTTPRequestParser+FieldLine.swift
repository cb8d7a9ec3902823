import Foundation

/// Field lines (RFC 9112 §5), of the head and of a chunked body's trailers.
extension HTTPRequestParser {
    /// RFC 9112 §5: field-line = field-name ":" OWS field-value OWS, from `start` to `end` (the CR).
    static func parseFieldLine(_ p: UnsafeRawBufferPointer, _ start: Int, _ end: Int) throws
        -> (name: String, value: String)
    {
        let (name, value) = try fieldLine(p, start, end)
        try checkValue(UnsafeRawBufferPointer(rebasing: p[value]))
        return (
            HTTPFieldNames.name(UnsafeRawBufferPointer(rebasing: p[name])),
            string(p, value.lowerBound, value.upperBound)
        )
    }

    /// RFC 9112 §5: where a field line's name and its value (without the surrounding whitespace)
    /// are; the value's bytes are checked by `checkValue`.
    static func fieldLine(_ p: UnsafeRawBufferPointer, _ start: Int, _ end: Int) throws
        -> (name: Range<Int>, value: Range<Int>)
    {
        // RFC 9112 §5.2: obs-fold (a line starting with whitespace) is rejected with 400.
        if p[start] == sp || p[start] == htab { throw HTTPParseError.obsoleteLineFolding }
        var i = start
        while i < end, isTchar(p[i]) { i += 1 }
        // RFC 9112 §5.1: no whitespace between field name and colon.
        guard i > start, i < end, p[i] == 0x3A else { throw HTTPParseError.invalidHeaderName }
        let nameEnd = i
        i += 1
        while i < end, p[i] == sp || p[i] == htab { i += 1 }
        var valueEnd = end
        while valueEnd > i, p[valueEnd - 1] == sp || p[valueEnd - 1] == htab { valueEnd -= 1 }
        return (start..<nameEnd, i..<valueEnd)
    }

    /// RFC 9110 §5.5: field-vchar = VCHAR / obs-text, with SP and HTAB inside; CR, LF, NUL and other
    /// CTLs are invalid (a bare CR included).
    static func checkValue(_ value: UnsafeRawBufferPointer) throws {
        if ASCIIScan.hasInvalidFieldByte(value) { throw HTTPParseError.invalidHeaderValue }
    }
}
