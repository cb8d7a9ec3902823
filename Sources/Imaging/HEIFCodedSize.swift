/// The coded size of every HEVC or AV1 image libheif decodes for a HEIF's primary image, read from
/// its sequence parameter sets (AV1: sequence headers) before anything is decoded, and refused over
/// `max_pixels` or larger than its `ispe` declares.
///
/// libheif 1.15 takes an image's size from its `ispe` property (which galleryd checks against
/// `max_pixels`), but hands the coded data to libde265 without checking that the SPS in it
/// codes a picture of that size: a file declaring 64×48 whose SPS says 16384×16384 (or a grid
/// whose every tile's SPS lies) has libde265 allocate and decode the huge picture. The SPSs are
/// the ones libheif passes to the decoder: those in the item's `hvcC` and any in its data.
enum HEIFCodedSize {
    /// How much larger than its `ispe` a coded picture may be each way: encoders pad the picture
    /// to their coding block (at most 64×64 in HEVC), and crop it back with the conformance window.
    static let padding = 64

    /// Largest number of NAL units read in one item's data.
    static let maxNALUnits = 100_000

    /// Checks the primary image of the HEIF in `source`, and every image it is derived from
    /// (a grid's tiles, an overlay's or identity's image), each once; and that all of them together,
    /// each as often as it is referenced (libheif decodes a tile once per reference), are coded in
    /// at most twice `max_pixels` (a grid's tiles may overhang its right and bottom edges).
    static func check(_ source: HeaderByteSource, limits: ImageLimits) throws {
        let items = try HEIFItems.read(source)
        var pending = [items.primary]
        var derived: Set<Int> = []
        var coded: [Int: Int] = [:]
        var total = 0
        while let item = pending.popLast() {
            let pixels: Int
            if let known = coded[item] {
                pixels = known
            } else if items.types[item] == "hvc1" {
                pixels = try checkHEVC(item, items, source, limits)
            } else if items.types[item] == "av01" {
                pixels = try checkAV1(item, items, source, limits)
            } else {
                guard derived.insert(item).inserted else { continue }
                pending += items.derivedFrom[item] ?? []
                continue
            }
            coded[item] = pixels
            total += pixels
            guard total <= 2 * limits.maxPixels else {
                throw ImageError.corrupt(
                    "HEIF primary image is made of at least \(total) coded pixels, over twice the limit of \(limits.maxPixels)"
                )
            }
        }
    }

    /// The sizes in `item`'s SPSs against its `ispe` and `limits`; the largest one's pixels.
    static func checkHEVC(_ item: Int, _ items: HEIFItems, _ source: HeaderByteSource, _ limits: ImageLimits) throws
        -> Int
    {
        guard let hvcC = items.property("hvcC", of: item) else {
            throw ImageError.corrupt("HEVC image \(item) has no hvcC")
        }
        var sizes = try parameterSetSizes(hvcC: hvcC)
        sizes += try dataSizes(ItemData(item: item, items: items, source: source))
        return try check(item, "HEVC", sizes, items, limits)
    }

    /// The max frame sizes in `item`'s AV1 sequence headers (in its `av1C`'s configOBUs and in its
    /// data) against its `ispe` and `limits`; the largest one's pixels.
    static func checkAV1(_ item: Int, _ items: HEIFItems, _ source: HeaderByteSource, _ limits: ImageLimits) throws
        -> Int
    {
        guard let av1C = items.property("av1C", of: item), av1C.count >= 4 else {
            throw ImageError.corrupt("AV1 image \(item) has no av1C")
        }
        let configOBUs = Array(av1C.dropFirst(4))
        var sizes = try AV1SequenceHeader.sizes(configOBUs.count) { Array(configOBUs.dropFirst($0).prefix($1)) }
        let data = ItemData(item: item, items: items, source: source)
        sizes += try AV1SequenceHeader.sizes(data.total) { try data.read($0, $1) }
        return try check(item, "AV1", sizes, items, limits)
    }

    /// `item`'s coded `sizes` against its `ispe` and `limits`; the largest one's pixels.
    static func check(
        _ item: Int, _ codec: String, _ sizes: [(width: Int, height: Int)], _ items: HEIFItems, _ limits: ImageLimits
    ) throws -> Int {
        // ISO/IEC 23008-12 §6.5.3.1: every image item has an ispe.
        guard let ispe = items.property("ispe", of: item), ispe.count >= 12 else {
            throw ImageError.corrupt("\(codec) image \(item) has no ispe")
        }
        let declared = (
            width: ISOBMFFBoxes.int(ispe.dropFirst(4).prefix(4)), height: ISOBMFFBoxes.int(ispe.dropFirst(8).prefix(4))
        )
        guard !sizes.isEmpty else {
            throw ImageError.corrupt(
                "\(codec) image \(item) has no \(codec == "AV1" ? "sequence header" : "sequence parameter set")")
        }
        for (width, height) in sizes {
            guard width * height <= limits.maxPixels else {
                throw ImageError.tooManyPixels(width: width, height: height, limit: limits.maxPixels)
            }
            guard width <= declared.width + padding, height <= declared.height + padding else {
                throw ImageError.corrupt(
                    "\(codec) image \(item) is coded \(width)×\(height), its ispe says \(declared.width)×\(declared.height)"
                )
            }
        }
        return sizes.map { $0.width * $0.height }.max() ?? 0
    }

    /// The sizes of the SPSs in an `hvcC` box's payload (ISO/IEC 14496-15 §8.3.3.1): 22 bytes of
    /// configuration, then arrays of NAL units, each with a 16-bit length.
    static func parameterSetSizes(hvcC: ArraySlice<UInt8>) throws -> [(width: Int, height: Int)] {
        var reader = HEIFItems.Reader(bytes: hvcC)
        try reader.skip(22)
        var sizes: [(width: Int, height: Int)] = []
        for _ in 0..<(try reader.int(1)) {
            let type = try reader.int(1) & 0x3F
            for _ in 0..<(try reader.int(2)) {
                let nal = try reader.bytes(try reader.int(2))
                if type == HEVCSequenceParameterSet.nalType {
                    sizes.append(try HEVCSequenceParameterSet.codedSize(nal: nal))
                }
            }
        }
        return sizes
    }

    /// The sizes of the SPSs in an item's data: NAL units with 4-byte lengths, as libheif 1.15
    /// hands them to libde265.
    static func dataSizes(_ data: ItemData) throws -> [(width: Int, height: Int)] {
        var sizes: [(width: Int, height: Int)] = []
        var offset = 0
        for _ in 0..<maxNALUnits {
            guard offset < data.total else { return sizes }
            let head = try data.read(offset, 6)
            guard head.count >= 4 else { return sizes }
            let length = ISOBMFFBoxes.int(head[0..<4])
            if head.count == 6, HEVCSequenceParameterSet.type(head[4]) == HEVCSequenceParameterSet.nalType {
                sizes.append(try HEVCSequenceParameterSet.codedSize(nal: try data.read(offset + 4, min(length, 4096))))
            }
            offset += 4 + length
        }
        throw ImageError.corrupt("HEVC image \(data.item) has over \(maxNALUnits) NAL units")
    }

    /// An item's data: its extents one after another, in the file or in `idat`.
    struct ItemData {
        let item: Int
        let items: HEIFItems
        let source: HeaderByteSource
        let extents: [HEIFItems.Extent]
        /// Its length; an extent of length 0 runs to the end of the file, counted as 1 TB.
        let total: Int

        init(item: Int, items: HEIFItems, source: HeaderByteSource) {
            self.item = item
            self.items = items
            self.source = source
            extents = items.extents[item] ?? []
            total = extents.reduce(0) { $0 + Self.length($1) }
        }

        static func length(_ extent: HEIFItems.Extent) -> Int { extent.length == 0 ? 1 << 40 : extent.length }

        /// Up to `count` bytes at `offset`; fewer at its end.
        func read(_ offset: Int, _ count: Int) throws -> [UInt8] {
            var bytes: [UInt8] = []
            var start = 0
            for extent in extents where bytes.count < count {
                let length = Self.length(extent)
                defer { start += length }
                let from = max(offset + bytes.count, start)
                guard from < start + length else { continue }
                let wanted = min(count - bytes.count, start + length - from)
                let at = extent.offset + from - start
                let got: ArraySlice<UInt8> =
                    items.inIDAT.contains(item)
                    ? items.idat.dropFirst(at).prefix(wanted) : try source.read(at: at, count: wanted)
                bytes += got
                if got.count < wanted { break }
            }
            return bytes
        }
    }
}
