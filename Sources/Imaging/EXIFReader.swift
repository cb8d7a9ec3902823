import CivilCalendar
import Foundation

/// Reads the EXIF fields galleryd needs from an APP1 payload: Orientation, DateTimeOriginal and the
/// camera's Make and Model.
///
/// The payload is `Exif\0\0` followed by a TIFF structure (TIFF 6.0 §2) in either byte order
/// (`II*\0` little-endian, `MM\0*` big-endian). Only IFD0 and the Exif sub-IFD are visited and
/// every offset is bounds-checked, so a hostile block can neither crash nor loop.
struct EXIFReader {
    /// The fields found; nil when absent or malformed.
    struct Fields: Equatable {
        var orientation: Int?
        var takenAt: Date?
        /// IFD0 Make (`Apple`), cleaned by `cameraText`.
        var make: String?
        /// IFD0 Model (`iPhone 15 Pro`), cleaned by `cameraText`.
        var model: String?
    }

    /// Longest camera make or model kept, in characters; longer ones are cut there.
    static let maxCameraText = 64
    /// Largest Make/Model value read, in bytes; a larger one is ignored as hostile.
    static let maxCameraBytes = 4096

    private enum Tag {
        static let make: UInt16 = 0x010F
        static let model: UInt16 = 0x0110
        static let orientation: UInt16 = 0x0112
        static let exifIFDPointer: UInt16 = 0x8769
        static let dateTimeOriginal: UInt16 = 0x9003
        static let offsetTimeOriginal: UInt16 = 0x9011
        static let subSecTimeOriginal: UInt16 = 0x9291
    }

    private let tiff: [UInt8]
    private let littleEndian: Bool

    /// Parses an APP1 payload (starting at `Exif\0\0`); returns nil when it is not EXIF.
    static func parse(app1 payload: ArraySlice<UInt8>) -> Fields? {
        let header: [UInt8] = [0x45, 0x78, 0x69, 0x66, 0, 0]  // "Exif\0\0"
        guard payload.count >= 14, payload.prefix(6).elementsEqual(header) else { return nil }
        let tiff = Array(payload.dropFirst(6))
        let littleEndian: Bool
        switch (tiff[0], tiff[1]) {
        case (0x49, 0x49): littleEndian = true
        case (0x4D, 0x4D): littleEndian = false
        default: return nil
        }
        let reader = EXIFReader(tiff: tiff, littleEndian: littleEndian)
        guard reader.u16(at: 2) == 42, let ifd0 = reader.u32(at: 4) else { return nil }
        return reader.readFields(ifd0: Int(ifd0))
    }

    private func readFields(ifd0: Int) -> Fields {
        var fields = Fields()
        var exifIFD: Int?
        forEachEntry(inIFDAt: ifd0) { tag, type, count, valueOffset in
            switch tag {
            case Tag.orientation where type == 3 && count >= 1:  // SHORT
                if let value = u16(at: valueOffset), (1...8).contains(value) { fields.orientation = Int(value) }
            case Tag.exifIFDPointer where type == 4 || type == 13:  // LONG or IFD
                if let pointer = u32(at: valueOffset) { exifIFD = Int(pointer) }
            case Tag.make where type == 2 || type == 7:  // ASCII, or UNDEFINED as some writers store it
                fields.make = value(count: count, valueOffset: valueOffset, limit: Self.maxCameraBytes)
                    .flatMap(Self.cameraText)
            case Tag.model where type == 2 || type == 7:
                fields.model = value(count: count, valueOffset: valueOffset, limit: Self.maxCameraBytes)
                    .flatMap(Self.cameraText)
            default: break
            }
        }
        guard let exifIFD, exifIFD != ifd0 else { return fields }
        var dateTime: String?
        var offset: String?
        var subSeconds: String?
        forEachEntry(inIFDAt: exifIFD) { tag, type, count, valueOffset in
            guard type == 2 else { return }  // ASCII
            switch tag {
            case Tag.dateTimeOriginal: dateTime = ascii(tag: tag, count: count, valueOffset: valueOffset)
            case Tag.offsetTimeOriginal: offset = ascii(tag: tag, count: count, valueOffset: valueOffset)
            case Tag.subSecTimeOriginal: subSeconds = ascii(tag: tag, count: count, valueOffset: valueOffset)
            default: break
            }
        }
        if let dateTime { fields.takenAt = Self.date(exif: dateTime, offset: offset, subSeconds: subSeconds) }
        return fields
    }

    /// Calls `body(tag, type, count, offsetOfValueField)` for each 12-byte entry of the IFD.
    private func forEachEntry(inIFDAt offset: Int, _ body: (UInt16, UInt16, Int, Int) -> Void) {
        guard let count = u16(at: offset) else { return }
        for index in 0..<Int(count) {
            let entry = offset + 2 + index * 12
            guard let tag = u16(at: entry), let type = u16(at: entry + 2), let n = u32(at: entry + 4),
                entry + 12 <= tiff.count
            else { return }
            body(tag, type, Int(n), entry + 8)
        }
    }

    /// An ASCII value: inline when it fits in four bytes, else at the offset stored there.
    private func ascii(tag: UInt16, count: Int, valueOffset: Int) -> String? {
        guard let bytes = value(count: count, valueOffset: valueOffset, limit: 255) else { return nil }
        return String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespaces)
    }

    /// The bytes of a byte-sized value up to its first NUL: inline when it fits in four bytes,
    /// else at the offset stored there; nil when empty, over `limit` or out of bounds.
    private func value(count: Int, valueOffset: Int, limit: Int) -> ArraySlice<UInt8>? {
        guard count > 0, count <= limit else { return nil }
        let start: Int
        if count <= 4 {
            start = valueOffset
        } else {
            guard let pointer = u32(at: valueOffset) else { return nil }
            start = Int(pointer)
        }
        guard start >= 0, start + count <= tiff.count else { return nil }
        return tiff[start..<start + count].prefix { $0 != 0 }
    }

    /// A make or model as stored and shown: UTF-8 (invalid bytes and control characters dropped),
    /// runs of white space (tabs and line breaks too) as one space, trimmed, cut to `maxCameraText` characters; nil when nothing is left.
    static func cameraText(_ bytes: ArraySlice<UInt8>) -> String? {
        var text = ""
        var pendingSpace = false
        for scalar in String(decoding: bytes, as: UTF8.self).unicodeScalars {
            if scalar.properties.isWhitespace {
                pendingSpace = !text.isEmpty
                continue
            }
            if scalar == "\u{FFFD}" || scalar.properties.generalCategory == .control
                || scalar.properties.generalCategory == .format
            {
                continue
            }
            if pendingSpace { text.unicodeScalars.append(" ") }
            pendingSpace = false
            text.unicodeScalars.append(scalar)
        }
        guard !text.isEmpty else { return nil }
        return text.count > maxCameraText
            ? String(text.prefix(maxCameraText)).trimmingCharacters(in: .whitespaces) : text
    }

    private func u16(at offset: Int) -> UInt16? {
        guard offset >= 0, offset + 2 <= tiff.count else { return nil }
        let a = UInt16(tiff[offset])
        let b = UInt16(tiff[offset + 1])
        return littleEndian ? a | b << 8 : a << 8 | b
    }

    private func u32(at offset: Int) -> UInt32? {
        guard offset >= 0, offset + 4 <= tiff.count else { return nil }
        let bytes = (0..<4).map { UInt32(tiff[offset + $0]) }
        return littleEndian
            ? bytes[0] | bytes[1] << 8 | bytes[2] << 16 | bytes[3] << 24
            : bytes[0] << 24 | bytes[1] << 16 | bytes[2] << 8 | bytes[3]
    }

    /// Parses `YYYY:MM:DD HH:MM:SS`, with an optional `±HH:MM` offset (else UTC) and fraction digits.
    static func date(exif text: String, offset: String?, subSeconds: String?) -> Date? {
        let digits = Array(text.utf8)
        guard digits.count >= 19 else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for index in range {
                let c = digits[index]
                guard c >= 0x30, c <= 0x39 else { return nil }
                value = value * 10 + Int(c - 0x30)
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
            let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
            year >= 1800, (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        var seconds = Double(CivilDate(year: Int64(year), month: Int64(month), day: Int64(day)).daysSince1970) * 86_400
        seconds += Double(hour * 3600 + minute * 60 + second)
        if let subSeconds, !subSeconds.isEmpty, subSeconds.allSatisfy(\.isNumber), subSeconds.count <= 9,
            let fraction = Double("0." + subSeconds)
        {
            seconds += fraction
        }
        if let offset, let parsed = offsetSeconds(offset) { seconds -= Double(parsed) }
        return Date(timeIntervalSince1970: seconds)
    }

    /// `+HH:MM` / `-HH:MM` in seconds east of UTC.
    private static func offsetSeconds(_ text: String) -> Int? {
        let bytes = Array(text.utf8)
        guard bytes.count == 6, bytes[0] == 0x2B || bytes[0] == 0x2D, bytes[3] == 0x3A,
            let hours = Int(String(decoding: bytes[1..<3], as: UTF8.self)),
            let minutes = Int(String(decoding: bytes[4..<6], as: UTF8.self)), hours <= 14, minutes < 60
        else { return nil }
        let value = hours * 3600 + minutes * 60
        return bytes[0] == 0x2D ? -value : value
    }
}
