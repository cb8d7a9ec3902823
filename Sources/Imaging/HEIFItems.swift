/// The items of a HEIF file's `meta` box that galleryd checks itself before libheif decodes
/// anything (ISO/IEC 23008-12 §9, ISO/IEC 14496-12 §8.11): the primary item, each item's type,
/// its derived-image (`dimg`) references, its properties and where its data lies.
///
/// libheif 1.15 checks neither a coded image's size against its `ispe` nor the size of the
/// images a grid is made of, so galleryd reads them here (`HEIFCodedSize`).
struct HEIFItems {
    /// An extent of an item's data: `offset` in the file (construction method 0) or in the `meta`
    /// box's `idat` payload (method 1).
    struct Extent {
        var offset: Int
        var length: Int
    }

    var primary: Int
    var types: [Int: String] = [:]
    /// `dimg` references: a derived image (grid, overlay, identity) to the images it is made of.
    var derivedFrom: [Int: [Int]] = [:]
    /// Each item's associated properties: their type and payload, in `ipma` order.
    var properties: [Int: [(type: String, payload: ArraySlice<UInt8>)]] = [:]
    var extents: [Int: [Extent]] = [:]
    /// Items whose data is in `idat` (construction method 1).
    var inIDAT: Set<Int> = []
    /// The `idat` box's payload, if any.
    var idat: ArraySlice<UInt8> = []

    /// The first property of `type` associated with `item`.
    func property(_ type: String, of item: Int) -> ArraySlice<UInt8>? {
        properties[item]?.first { $0.type == type }?.payload
    }

    /// Largest `meta` box read (its payload is held in memory).
    static let maxMetaSize = 64 << 20

    /// Reads the `meta` box of the file in `source`: the top-level boxes are walked to it.
    static func read(_ source: HeaderByteSource) throws -> HEIFItems {
        var at = 0
        while let header = try ISOBMFFBoxes.header(in: source, at: at) {
            if header.type == "meta" {
                return try parse(meta: try payload(of: header, at: at, in: source))
            }
            guard let size = header.size else { break }  // the last box, and not meta
            at += size
        }
        throw ImageError.corrupt("HEIF has no meta box")
    }

    /// The payload of the `meta` box whose `header` is at `offset`, at most `maxMetaSize` bytes.
    private static func payload(of header: ISOBMFFBoxes.Header, at offset: Int, in source: HeaderByteSource) throws
        -> [UInt8]
    {
        if let size = header.size, size > maxMetaSize { throw ImageError.corrupt("HEIF meta box of \(size) bytes") }
        // A size-0 box runs to the end of the file: one byte over the limit is read to tell.
        let wanted = (header.size ?? maxMetaSize + 1) - header.length
        let payload = Array(try source.read(at: offset + header.length, count: wanted))
        if header.size == nil {
            guard payload.count < wanted else { throw ImageError.corrupt("HEIF meta box of over \(maxMetaSize) bytes") }
        } else {
            guard payload.count == wanted else { throw ImageError.truncated }
        }
        return payload
    }

    /// Parses a `meta` box's payload (a full box: version and flags first).
    static func parse(meta: [UInt8]) throws -> HEIFItems {
        guard meta.count >= 4 else { throw ImageError.corrupt("HEIF meta box is empty") }
        let children = ISOBMFFBoxes.boxes(in: meta, 4..<meta.count)
        guard let pitm = children.first(where: { $0.type == "pitm" }) else {
            throw ImageError.corrupt("HEIF has no primary item")
        }
        var reader = Reader(bytes: meta[pitm.payload])
        let version = try reader.int(1)
        try reader.skip(3)
        var items = HEIFItems(primary: try reader.int(version == 0 ? 2 : 4))
        for child in children {
            switch child.type {
            case "iinf": try items.readIINF(meta, child.payload)
            case "iref": try items.readIREF(meta, child)
            case "iprp": try items.readIPRP(meta, child.payload)
            case "iloc": try items.readILOC(meta[child.payload])
            case "idat": items.idat = meta[child.payload]
            default: break
            }
        }
        return items
    }

    private mutating func readIINF(_ meta: [UInt8], _ payload: Range<Int>) throws {
        var reader = Reader(bytes: meta[payload])
        let version = try reader.int(1)
        try reader.skip(3 + (version == 0 ? 2 : 4))
        let start = payload.lowerBound + reader.at
        for infe in ISOBMFFBoxes.boxes(in: meta, start..<payload.upperBound) where infe.type == "infe" {
            var entry = Reader(bytes: meta[infe.payload])
            let infeVersion = try entry.int(1)
            guard infeVersion >= 2 else { continue }  // no item type before version 2
            try entry.skip(3)
            let id = try entry.int(infeVersion == 2 ? 2 : 4)
            try entry.skip(2)
            types[id] = String(decoding: try entry.bytes(4), as: UTF8.self)
        }
    }

    private mutating func readIREF(_ meta: [UInt8], _ iref: ISOBMFFBoxes.Box) throws {
        guard iref.fullPayload != nil else { throw ImageError.corrupt("HEIF iref box is empty") }
        let idSize = meta[iref.payload.lowerBound] == 0 ? 2 : 4
        for reference in ISOBMFFBoxes.children(ofFull: iref, in: meta) where reference.type == "dimg" {
            var reader = Reader(bytes: meta[reference.payload])
            let from = try reader.int(idSize)
            let count = try reader.int(2)
            derivedFrom[from, default: []] += try (0..<count).map { _ in try reader.int(idSize) }
        }
    }

    private mutating func readIPRP(_ meta: [UInt8], _ payload: Range<Int>) throws {
        let children = ISOBMFFBoxes.boxes(in: meta, payload)
        guard let ipco = children.first(where: { $0.type == "ipco" }) else { return }
        let all = ISOBMFFBoxes.boxes(in: meta, ipco.payload).map { (type: $0.type, payload: meta[$0.payload]) }
        for ipma in children where ipma.type == "ipma" {
            var reader = Reader(bytes: meta[ipma.payload])
            let version = try reader.int(1)
            let wideIndex = try reader.int(3) & 1 == 1
            for _ in 0..<(try reader.int(4)) {
                let item = try reader.int(version < 1 ? 2 : 4)
                for _ in 0..<(try reader.int(1)) {
                    let index = try reader.int(wideIndex ? 2 : 1) & (wideIndex ? 0x7FFF : 0x7F)
                    guard index > 0 else { continue }
                    guard index <= all.count else { throw ImageError.corrupt("HEIF property \(index) is missing") }
                    properties[item, default: []].append(all[index - 1])
                }
            }
        }
    }

    private mutating func readILOC(_ payload: ArraySlice<UInt8>) throws {
        var reader = Reader(bytes: payload)
        let version = try reader.int(1)
        try reader.skip(3)
        let sizes = try reader.int(2)
        let (offsetSize, lengthSize, baseSize) = (sizes >> 12, sizes >> 8 & 15, sizes >> 4 & 15)
        let indexSize = version == 1 || version == 2 ? sizes & 15 : 0
        for _ in 0..<(try reader.int(version < 2 ? 2 : 4)) {
            let id = try reader.int(version < 2 ? 2 : 4)
            if version == 1 || version == 2 {
                switch try reader.int(2) & 15 {
                case 0: break
                case 1: inIDAT.insert(id)
                case let method: throw ImageError.corrupt("HEIF item \(id) has construction method \(method)")
                }
            }
            try reader.skip(2)  // data_reference_index
            let base = try reader.int(baseSize)
            extents[id] = try (0..<(try reader.int(2))).map { _ in
                try reader.skip(indexSize)
                let offset = try reader.int(offsetSize)
                let length = try reader.int(lengthSize)
                guard base < 1 << 48, offset < 1 << 48, length < 1 << 48 else {
                    throw ImageError.corrupt("HEIF item \(id) lies past any file")
                }
                return Extent(offset: base + offset, length: length)
            }
        }
    }

    /// Big-endian fields read one after another; reading past the end is an error.
    struct Reader {
        let bytes: ArraySlice<UInt8>
        var at = 0

        mutating func bytes(_ count: Int) throws -> ArraySlice<UInt8> {
            let start = bytes.startIndex + at
            guard count >= 0, count <= bytes.count - at else { throw ImageError.corrupt("HEIF box is too short") }
            at += count
            return bytes[start..<start + count]
        }
        mutating func int(_ count: Int) throws -> Int {
            guard count <= 8 else { throw ImageError.corrupt("HEIF field of \(count) bytes") }
            let value = ISOBMFFBoxes.int(try bytes(count))
            guard value >= 0 else { throw ImageError.corrupt("HEIF field out of range") }
            return value
        }
        mutating func skip(_ count: Int) throws { _ = try bytes(count) }
    }
}
