/// The boxes of an ISO base media file (ISO/IEC 14496-12 §4.2), the container of HEIF and AVIF:
/// the one box walker behind galleryd's own HEIF checks (`HEIFItems`, `HEIFAlpha`, `ContainerEnd`).
///
/// A box starts with a 32-bit size and a four-character type. Size 1 means a 64-bit `largesize`
/// follows the type; size 0, that the box runs to the end of its container (the file, for a
/// top-level box). A full box's payload starts with a version byte and 24 bits of flags. Sizes are
/// read, never trusted: a walk stops at a box whose header is cut short, whose size is under its
/// header's, or which runs past its container's end.
enum ISOBMFFBoxes {
    /// Largest box size taken (256 TB): a larger `largesize` is refused, so that offsets summed
    /// from sizes never overflow.
    static let maxSize = 1 << 48

    /// A box's header: its type, the header's length (8, or 16 with a `largesize`) and the whole
    /// box's size, nil when the box runs to the end of its container (size 0).
    struct Header: Equatable {
        var type: String
        var length: Int
        var size: Int?
    }

    /// A box held in memory: its type and where its payload lies in the bytes walked.
    struct Box: Equatable {
        var type: String
        var payload: Range<Int>

        /// For a full box: the payload after its version and flags; nil when it is too short for them.
        var fullPayload: Range<Int>? {
            payload.count >= 4 ? (payload.lowerBound + 4)..<payload.upperBound : nil
        }
    }

    /// The header at the start of `bytes` (the up to 16 bytes where a box starts). Throws
    /// `truncated` when they are too few for it, and `corrupt` for a size under the header's length
    /// or over `maxSize`.
    static func header(_ bytes: ArraySlice<UInt8>) throws -> Header {
        guard bytes.count >= 8 else { throw ImageError.truncated }
        let start = bytes.startIndex
        let type = String(decoding: bytes[(start + 4)..<(start + 8)], as: UTF8.self)
        switch int(bytes[start..<start + 4]) {
        case 0:
            return Header(type: type, length: 8, size: nil)
        case 1:
            guard bytes.count >= 16 else { throw ImageError.truncated }
            let size = int(bytes[(start + 8)..<(start + 16)])  // negative when its top bit is set
            guard size >= 16, size <= maxSize else { throw ImageError.corrupt("HEIF box '\(type)' of size \(size)") }
            return Header(type: type, length: 16, size: size)
        case let size:
            guard size >= 8 else { throw ImageError.corrupt("HEIF box '\(type)' of size \(size)") }
            return Header(type: type, length: 8, size: size)
        }
    }

    /// The header of the box at `offset` of the file in `source`; nil when fewer than 8 bytes are
    /// left there (the end of the file, or a tail too short for any box).
    static func header(in source: HeaderByteSource, at offset: Int) throws -> Header? {
        let bytes = try source.read(at: offset, count: 16)
        guard bytes.count >= 8 else { return nil }
        return try header(bytes)
    }

    /// The boxes laid one after another in `range` of `bytes` (clamped to them); a size-0 box runs
    /// to the end of `range`. Stops at the first box that does not fit.
    static func boxes(in bytes: [UInt8], _ range: Range<Int>) -> [Box] {
        let range = range.clamped(to: 0..<bytes.count)
        var found: [Box] = []
        var at = range.lowerBound
        while at < range.upperBound, let header = try? header(bytes[at..<min(at + 16, range.upperBound)]) {
            let size = header.size ?? range.upperBound - at
            guard size <= range.upperBound - at else { break }
            found.append(Box(type: header.type, payload: (at + header.length)..<(at + size)))
            at += size
        }
        return found
    }

    /// The boxes inside the full box `box` of `bytes` (after its version and flags), as `meta`
    /// and `iref` hold them; none when it is too short for its version and flags.
    static func children(ofFull box: Box, in bytes: [UInt8]) -> [Box] {
        box.fullPayload.map { boxes(in: bytes, $0) } ?? []
    }

    /// A big-endian unsigned field (at most 8 bytes: the top bit of an 8-byte one makes it negative).
    static func int(_ bytes: ArraySlice<UInt8>) -> Int { bytes.reduce(0) { $0 << 8 | Int($1) } }
}
