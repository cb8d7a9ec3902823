/// Builds HEIF files that `heif-enc` cannot: a grid-tiled primary image (as phones store their
/// photos), images with `clap`, `irot` and `imir` properties, and images beside the primary:
/// auxiliary images of any type (depth maps, Apple's gain maps and portrait mattes, alpha), a
/// thumbnail item and other top-level images. The HEVC images come from `heif-enc` files (their
/// `hvcC` box and `mdat` payload); the boxes around them are written here (ISO/IEC 14496-12 §8.11,
/// ISO/IEC 23008-12 §6, §6.5.8 auxiliary images, §9.3 ImageGrid, §6.5 transformative properties).
public enum HEIFAssembler {
    /// A coded HEVC image lifted from a single-image `heif-enc` file (or an AV1 one, from `heif-enc -A`).
    public struct Tile {
        /// Its decoder configuration box: `hvcC`, or `av1C` for AV1.
        public var hvcC: [UInt8]
        public var data: [UInt8]
        public var width: Int
        public var height: Int
        /// `hvc1`, or `av01` for AV1 (then the file is an AVIF).
        public var itemType = "hvc1"

        /// Reads the `hvcC` (or `av1C`) box and the `mdat` payload of a file `heif-enc` wrote (one
        /// image, no thumbnail, no metadata, so the `mdat` holds only that image's data).
        public init(heifEncOutput file: [UInt8], width: Int, height: Int) {
            func box(_ type: String) -> Range<Int>? {
                let fourcc = Array(type.utf8)
                guard let at = (4..<file.count - 4).first(where: { file[$0..<$0 + 4].elementsEqual(fourcc) }) else {
                    return nil
                }
                let size = file[(at - 4)..<at].reduce(0) { $0 << 8 | Int($1) }
                return (at - 4)..<(at - 4 + size)
            }
            if let hvcC = box("hvcC") {
                self.hvcC = Array(file[hvcC])
            } else {
                hvcC = Array(file[box("av1C")!])
                itemType = "av01"
            }
            data = Array(file[box("mdat")!].dropFirst(8))
            self.width = width
            self.height = height
        }
    }

    /// A transformative property of the primary image, applied in the order given.
    public enum Transform: Sendable {
        /// Clean aperture: a centred crop to `width`×`height`.
        case clap(width: Int, height: Int)
        /// Rotation anticlockwise by `quarters` × 90°.
        case irot(quarters: Int)
        /// Mirroring: as libheif 1.15 reads `axis`, 0 swaps top and bottom, 1 left and right.
        case imir(axis: Int)
    }

    /// A `colr` property of the primary image (ISO/IEC 23008-12 §6.5.5).
    public enum Colour {
        /// nclx with these primaries and transfer (ITU-T H.273; sRGB's unless given), BT.601 matrix,
        /// full range: what `heif-enc` encodes with, though 1.15 writes no `colr` box itself.
        case nclx(primaries: Int, transfer: Int = 13)
        /// An ICC profile (`prof`).
        case icc([UInt8])
    }

    /// A coded image beside the primary one.
    public struct Attached {
        public enum Role: Sendable {
            /// An auxiliary image of the primary (`auxl` reference) of this `auxC` type.
            case auxiliary(String)
            /// The primary's thumbnail item (`thmb` reference).
            case thumbnail
            /// Another top-level image, listed before the primary (a lower item ID).
            case otherImage
        }

        public var tile: Tile
        public var role: Role
        /// The size its `ispe` declares; the tile's own when nil.
        public var declaredSize: (width: Int, height: Int)?
        /// Its coded data (NAL lengths too) replaced by zeros: a corrupt image in whole boxes.
        public var corrupt: Bool

        public init(_ tile: Tile, _ role: Role, declaredSize: (width: Int, height: Int)? = nil, corrupt: Bool = false) {
            self.tile = tile
            self.role = role
            self.declaredSize = declaredSize
            self.corrupt = corrupt
        }
    }

    /// Types of real phones' auxiliary images: MPEG's HEVC alpha and depth, and Apple's.
    public static let alphaType = "urn:mpeg:hevc:2015:auxid:1"
    public static let depthType = "urn:mpeg:hevc:2015:auxid:2"
    public static let appleGainMapType = "urn:com:apple:photo:2020:aux:hdrgainmap"
    public static let applePortraitMatteType = "urn:com:apple:photo:2018:aux:portraiteffectsmatte"

    /// A file whose primary image is `tiles` (row-major) laid out `columns` wide into a
    /// `width`×`height` grid, or the single tile itself when `grid` is false; the tiles' `ispe`
    /// and the grid's size are written as given (a bomb declares a huge grid). `attached` images
    /// are items of their own beside the primary, which has a `clli` property of `lightLevel`
    /// cd/m² (its maximum content light level; ISO/IEC 23008-12 §6.5.12 as libheif reads it) when given.
    public static func assemble(
        tiles: [Tile], columns: Int = 1, grid: Bool, width: Int? = nil, height: Int? = nil,
        transforms: [Transform] = [],
        colour: Colour? = nil, attached: [Attached] = [], lightLevel: Int? = nil
    ) -> [UInt8] {
        let rows = tiles.count / columns
        // Item IDs: other top-level images first, then the tiles, the grid, the other attached ones.
        let others = attached.filter { if case .otherImage = $0.role { true } else { false } }
        let beside = attached.filter { if case .otherImage = $0.role { false } else { true } }
        let tileIDs = tiles.indices.map { others.count + 1 + $0 }
        let gridID = others.count + tiles.count + 1
        let primaryID = grid ? gridID : tileIDs[0]
        let othersIDs = others.indices.map { 1 + $0 }
        let besideIDs = beside.indices.map { gridID + (grid ? 1 : 0) + $0 }
        let gridWidth = width ?? tiles[0].width * columns
        let gridHeight = height ?? tiles[0].height * rows
        let large = gridWidth > 65535 || gridHeight > 65535
        let gridData: [UInt8] =
            [0, large ? 1 : 0, UInt8(rows - 1), UInt8(columns - 1)]
            + (large ? u32(gridWidth) + u32(gridHeight) : u16(gridWidth) + u16(gridHeight))

        // Properties, 1-based: each tile's hvcC, the tile ispe, the grid ispe, then the transforms.
        var properties: [[UInt8]] = tiles.map(\.hvcC)
        properties.append(fullBox("ispe", u32(tiles[0].width) + u32(tiles[0].height)))
        let tileISPE = properties.count
        properties.append(fullBox("ispe", u32(gridWidth) + u32(gridHeight)))
        let gridISPE = properties.count
        var transformIndices: [Int] = []
        switch colour {
        case .nclx(let primaries, let transfer)?:
            properties.append(box("colr", Array("nclx".utf8) + u16(primaries) + u16(transfer) + u16(6) + [0x80]))
            transformIndices.append(properties.count)
        case .icc(let profile)?:
            properties.append(box("colr", Array("prof".utf8) + profile))
            transformIndices.append(properties.count)
        case nil:
            break
        }
        if let lightLevel {
            properties.append(box("clli", u16(lightLevel) + u16(lightLevel / 4)))
            transformIndices.append(properties.count)
        }
        for transform in transforms {
            switch transform {
            case .clap(let w, let h):
                properties.append(box("clap", u32(w) + u32(1) + u32(h) + u32(1) + u32(0) + u32(1) + u32(0) + u32(1)))
            case .irot(let quarters):
                properties.append(box("irot", [UInt8(quarters & 3)]))
            case .imir(let axis):
                properties.append(box("imir", [UInt8(axis & 1)]))
            }
            transformIndices.append(properties.count)
        }
        var associations: [(item: Int, properties: [Int])] = []
        for (index, id) in tileIDs.enumerated() {
            var list = [index + 1, tileISPE]
            if !grid { list = [index + 1, gridISPE] + transformIndices }
            associations.append((id, list))
        }
        if grid { associations.append((gridID, [gridISPE] + transformIndices)) }
        // Each attached image: its hvcC, its ispe and, for an auxiliary image, its auxC type.
        var references: [(type: String, from: Int)] = []
        for (image, id) in zip(others + beside, othersIDs + besideIDs) {
            let size = image.declaredSize ?? (width: image.tile.width, height: image.tile.height)
            properties.append(image.tile.hvcC)
            properties.append(fullBox("ispe", u32(size.width) + u32(size.height)))
            var list = [properties.count - 1, properties.count]
            switch image.role {
            case .auxiliary(let type):
                properties.append(fullBox("auxC", Array(type.utf8) + [0]))
                list.append(properties.count)
                references.append(("auxl", id))
            case .thumbnail:
                references.append(("thmb", id))
            case .otherImage:
                break
            }
            associations.append((id, list))
        }
        associations.sort { $0.item < $1.item }
        var ipma = u32(associations.count)
        for association in associations {
            ipma += u16(association.item) + [UInt8(association.properties.count)]
            ipma += association.properties.map { UInt8(0x80 | $0) }
        }
        let iprp = box("iprp", box("ipco", properties.flatMap { $0 }) + fullBox("ipma", ipma))

        // Items in ID order, with their type and data.
        var items: [(id: Int, type: String, data: [UInt8])] = []
        items += zip(othersIDs, others).map { ($0, $1.tile.itemType, $1.tile.data) }
        items += zip(tileIDs, tiles).map { ($0, $1.itemType, $1.data) }
        if grid { items.append((gridID, "grid", gridData)) }
        items += zip(besideIDs, beside).map { id, image in
            (
                id, image.tile.itemType,
                image.corrupt ? [UInt8](repeating: 0, count: image.tile.data.count) : image.tile.data
            )
        }
        let infos = items.map { fullBox("infe", u16($0.id) + u16(0) + Array($0.type.utf8) + [0], version: 2) }
        let iinf = fullBox("iinf", u16(infos.count) + infos.flatMap { $0 })
        var irefs: [UInt8] = []
        if grid { irefs += box("dimg", u16(gridID) + u16(tiles.count) + tileIDs.flatMap { u16($0) }) }
        for reference in references {
            irefs += box(reference.type, u16(reference.from) + u16(1) + u16(primaryID))
        }
        let iref = irefs.isEmpty ? [] : fullBox("iref", irefs)

        let brand = tiles[0].itemType == "av01" ? "avif" : "heic"
        let ftyp = box("ftyp", Array(brand.utf8) + u32(0) + Array("mif1\(brand)".utf8))
        // iloc offsets depend on the meta box's size, which does not depend on their values.
        func meta(dataStart: Int) -> [UInt8] {
            var iloc = [0x44, 0x00] + u16(items.count)
            var offset = dataStart
            for item in items {
                iloc += u16(item.id) + u16(0) + u16(1) + u32(offset) + u32(item.data.count)
                offset += item.data.count
            }
            let hdlr = fullBox("hdlr", u32(0) + Array("pict".utf8) + u32(0) + u32(0) + u32(0) + [0])
            return fullBox("meta", hdlr + fullBox("pitm", u16(primaryID)) + fullBox("iloc", iloc) + iinf + iref + iprp)
        }
        let metaSize = meta(dataStart: 0).count
        let dataStart = ftyp.count + metaSize + 8
        return ftyp + meta(dataStart: dataStart) + box("mdat", items.flatMap(\.data))
    }

    public static func box(_ type: String, _ payload: [UInt8]) -> [UInt8] {
        u32(payload.count + 8) + Array(type.utf8) + payload
    }
    public static func fullBox(_ type: String, _ payload: [UInt8], version: UInt8 = 0) -> [UInt8] {
        box(type, [version, 0, 0, 0] + payload)
    }
    public static func u16(_ v: Int) -> [UInt8] { [UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
    public static func u32(_ v: Int) -> [UInt8] {
        [UInt8(v >> 24 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)]
    }
}
