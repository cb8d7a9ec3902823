/// Builds HEIF files that `heif-enc` cannot: a grid-tiled primary image (as phones store their
/// photos) and images with `clap`, `irot` and `imir` properties. The HEVC tiles come from
/// `heif-enc` files (their `hvcC` box and `mdat` payload); the boxes around them are written here
/// (ISO/IEC 14496-12 §8.11, ISO/IEC 23008-12 §6, §9.3 ImageGrid, §6.5 transformative properties).
enum HEIFAssembler {
    /// A coded HEVC image lifted from a single-image `heif-enc` file.
    struct Tile {
        var hvcC: [UInt8]
        var data: [UInt8]
        var width: Int
        var height: Int

        /// Reads the `hvcC` box and the `mdat` payload of a file `heif-enc` wrote (one image, no
        /// thumbnail, no metadata, so the `mdat` holds only that image's data).
        init(heifEncOutput file: [UInt8], width: Int, height: Int) {
            func box(_ type: String) -> Range<Int> {
                let fourcc = Array(type.utf8)
                let at = (4..<file.count - 4).first { file[$0..<$0 + 4].elementsEqual(fourcc) }!
                let size = file[(at - 4)..<at].reduce(0) { $0 << 8 | Int($1) }
                return (at - 4)..<(at - 4 + size)
            }
            hvcC = Array(file[box("hvcC")])
            data = Array(file[box("mdat")].dropFirst(8))
            self.width = width
            self.height = height
        }
    }

    /// A transformative property of the primary image, applied in the order given.
    enum Transform {
        /// Clean aperture: a centred crop to `width`×`height`.
        case clap(width: Int, height: Int)
        /// Rotation anticlockwise by `quarters` × 90°.
        case irot(quarters: Int)
        /// Mirroring: as libheif 1.15 reads `axis`, 0 swaps top and bottom, 1 left and right.
        case imir(axis: Int)
    }

    /// A `colr` property of the primary image (ISO/IEC 23008-12 §6.5.5).
    enum Colour {
        /// nclx with these primaries (ITU-T H.273), sRGB transfer, BT.601 matrix, full range: what
        /// `heif-enc` encodes with, though 1.15 writes no `colr` box itself.
        case nclx(primaries: Int)
        /// An ICC profile (`prof`).
        case icc([UInt8])
    }

    /// A file whose primary image is `tiles` (row-major) laid out `columns` wide into a
    /// `width`×`height` grid, or the single tile itself when `grid` is false; the tiles' `ispe`
    /// and the grid's size are written as given (a bomb declares a huge grid).
    static func assemble(
        tiles: [Tile], columns: Int = 1, grid: Bool, width: Int? = nil, height: Int? = nil,
        transforms: [Transform] = [],
        colour: Colour? = nil
    ) -> [UInt8] {
        let rows = tiles.count / columns
        let gridID = tiles.count + 1
        let primaryID = grid ? gridID : 1
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
        case .nclx(let primaries)?:
            properties.append(box("colr", Array("nclx".utf8) + u16(primaries) + u16(13) + u16(6) + [0x80]))
            transformIndices.append(properties.count)
        case .icc(let profile)?:
            properties.append(box("colr", Array("prof".utf8) + profile))
            transformIndices.append(properties.count)
        case nil:
            break
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
        for index in tiles.indices {
            var list = [index + 1, tileISPE]
            if !grid { list = [index + 1, gridISPE] + transformIndices }
            associations.append((index + 1, list))
        }
        if grid { associations.append((gridID, [gridISPE] + transformIndices)) }
        var ipma = u32(associations.count)
        for association in associations {
            ipma += u16(association.item) + [UInt8(association.properties.count)]
            ipma += association.properties.map { UInt8(0x80 | $0) }
        }
        let iprp = box("iprp", box("ipco", properties.flatMap { $0 }) + fullBox("ipma", ipma))

        var infos = tiles.indices.map { fullBox("infe", u16($0 + 1) + u16(0) + Array("hvc1".utf8) + [0], version: 2) }
        if grid { infos.append(fullBox("infe", u16(gridID) + u16(0) + Array("grid".utf8) + [0], version: 2)) }
        let iinf = fullBox("iinf", u16(infos.count) + infos.flatMap { $0 })
        let iref =
            grid
            ? fullBox("iref", box("dimg", u16(gridID) + u16(tiles.count) + tiles.indices.flatMap { u16($0 + 1) })) : []
        let items: [[UInt8]] = tiles.map(\.data) + (grid ? [gridData] : [])

        let ftyp = box("ftyp", Array("heic".utf8) + u32(0) + Array("mif1heic".utf8))
        // iloc offsets depend on the meta box's size, which does not depend on their values.
        func meta(dataStart: Int) -> [UInt8] {
            var iloc = [0x44, 0x00] + u16(items.count)
            var offset = dataStart
            for (index, item) in items.enumerated() {
                iloc += u16(index + 1) + u16(0) + u16(1) + u32(offset) + u32(item.count)
                offset += item.count
            }
            let hdlr = fullBox("hdlr", u32(0) + Array("pict".utf8) + u32(0) + u32(0) + u32(0) + [0])
            return fullBox("meta", hdlr + fullBox("pitm", u16(primaryID)) + fullBox("iloc", iloc) + iinf + iref + iprp)
        }
        let metaSize = meta(dataStart: 0).count
        let dataStart = ftyp.count + metaSize + 8
        return ftyp + meta(dataStart: dataStart) + box("mdat", items.flatMap { $0 })
    }

    static func box(_ type: String, _ payload: [UInt8]) -> [UInt8] {
        u32(payload.count + 8) + Array(type.utf8) + payload
    }
    static func fullBox(_ type: String, _ payload: [UInt8], version: UInt8 = 0) -> [UInt8] {
        box(type, [version, 0, 0, 0] + payload)
    }
    static func u16(_ v: Int) -> [UInt8] { [UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
    static func u32(_ v: Int) -> [UInt8] {
        [UInt8(v >> 24 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)]
    }
}
