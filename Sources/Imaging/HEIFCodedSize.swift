/// The coded size of every HEVC image libheif decodes for a HEIF's primary image, read from its
/// sequence parameter sets before anything is decoded, and refused over `max_pixels` or larger than
/// its `ispe` declares.
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
    /// (a grid's tiles, an overlay's or identity's image), each once.
    static func check(_ source: HeaderByteSource, limits: ImageLimits) throws {
        let items = try HEIFItems.read(source)
        var pending = [items.primary]
        var seen: Set<Int> = []
        while let item = pending.popLast() {
            guard seen.insert(item).inserted else { continue }
            if items.types[item] == "hvc1" {
                try checkHEVC(item, items, source, limits)
            } else {
                pending += items.derivedFrom[item] ?? []
            }
        }
    }

    /// The sizes in `item`'s SPSs against its `ispe` and `limits`.
    static func checkHEVC(_ item: Int, _ items: HEIFItems, _ source: HeaderByteSource, _ limits: ImageLimits) throws {
        guard let hvcC = items.property("hvcC", of: item) else {
            throw ImageError.corrupt("HEVC image \(item) has no hvcC")
        }
        // ISO/IEC 23008-12 §6.5.3.1: every image item has an ispe.
        guard let ispe = items.property("ispe", of: item), ispe.count >= 12 else {
            throw ImageError.corrupt("HEVC image \(item) has no ispe")
        }
        let declared = (
            width: HEIFItems.int(ispe.dropFirst(4).prefix(4)), height: HEIFItems.int(ispe.dropFirst(8).prefix(4))
        )
        var sizes = try parameterSetSizes(hvcC: hvcC)
        sizes += try dataSizes(item, items, source)
        guard !sizes.isEmpty else { throw ImageError.corrupt("HEVC image \(item) has no sequence parameter set") }
        for (width, height) in sizes {
            guard width * height <= limits.maxPixels else {
                throw ImageError.tooManyPixels(width: width, height: height, limit: limits.maxPixels)
            }
            guard width <= declared.width + padding, height <= declared.height + padding else {
                throw ImageError.corrupt(
                    "HEVC image \(item) is coded \(width)×\(height), its ispe says \(declared.width)×\(declared.height)"
                )
            }
        }
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

    /// The sizes of the SPSs in `item`'s data: NAL units with 4-byte lengths, as libheif 1.15
    /// hands them to libde265.
    static func dataSizes(_ item: Int, _ items: HEIFItems, _ source: HeaderByteSource) throws
        -> [(width: Int, height: Int)]
    {
        let extents = items.extents[item] ?? []
        let total = extents.reduce(0) { $0 + ($1.length == 0 ? 1 << 40 : $1.length) }
        // `count` bytes at `offset` in the item's data (its extents one after another); fewer at its end.
        func read(_ offset: Int, _ count: Int) throws -> [UInt8] {
            var bytes: [UInt8] = []
            var start = 0
            for extent in extents where bytes.count < count {
                let length = extent.length == 0 ? 1 << 40 : extent.length
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
        var sizes: [(width: Int, height: Int)] = []
        var offset = 0
        for _ in 0..<maxNALUnits {
            guard offset < total else { return sizes }
            let head = try read(offset, 6)
            guard head.count >= 4 else { return sizes }
            let length = HEIFItems.int(head[0..<4])
            if head.count == 6, HEVCSequenceParameterSet.type(head[4]) == HEVCSequenceParameterSet.nalType {
                sizes.append(try HEVCSequenceParameterSet.codedSize(nal: try read(offset + 4, min(length, 4096))))
            }
            offset += 4 + length
        }
        throw ImageError.corrupt("HEVC image \(item) has over \(maxNALUnits) NAL units")
    }
}
