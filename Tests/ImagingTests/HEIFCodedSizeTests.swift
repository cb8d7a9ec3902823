import Foundation
import GalleryTestSupport
import Testing

@testable import Imaging

/// Issue #28: "dimensions read from headers and refused over max_pixels before any decode (HEIF
/// grids and PNGs are classic decompression bombs)". libheif 1.15 checks an image's `ispe`, not
/// the size its HEVC sequence parameter set codes, which is what libde265 allocates and decodes:
/// galleryd reads each SPS itself (`HEIFCodedSize`).
@Suite struct HEIFCodedSizeTests {
    static func tile(width: Int, height: Int) throws -> HEIFAssembler.Tile {
        HEIFAssembler.Tile(
            heifEncOutput: try FixtureTools.heic(
                HEIFTests.solidPNG(TestImages.red, width: width, height: height), options: ["-q", "50"]),
            width: width, height: height)
    }

    static func codedSize(_ tile: HEIFAssembler.Tile) throws -> (width: Int, height: Int) {
        let sps = tile.sequenceParameterSets
        try #require(sps.count == 1)
        return try HEVCSequenceParameterSet.codedSize(nal: sps[0])
    }

    /// The sizes heif-enc's SPSs code: its size, padded to x265's 8×8 minimum coding block, and
    /// to a whole 64×64 coding tree block when smaller (libheif 1.15's x265 plugin pads small images).
    @Test func codedSize_OfHeifEncOutputs() throws {
        for (width, height, coded) in [
            (64, 48, (64, 64)), (1, 1, (64, 64)), (512, 512, (512, 512)), (100, 75, (104, 80)),
        ] {
            let size = try Self.codedSize(try Self.tile(width: width, height: height))
            #expect(size == coded, "\(width)×\(height): \(size)")
        }
        let rewritten = try Self.tile(width: 64, height: 48).coded(width: 16384, height: 12345)
        #expect(try Self.codedSize(rewritten) == (16384, 12345))
    }

    /// A 64×64 HEIC whose SPS codes 16384×16384 is refused from its header with that size, by the
    /// probe and the pipeline, from memory and from a file; a lie under `max_pixels` is refused as
    /// corrupt, and a coded size padded up to 64 each way is allowed.
    @Test func probe_RefusesAnSPSThatCodesMoreThanTheISPE() throws {
        let tile = try Self.tile(width: 64, height: 64)
        let bomb = HEIFAssembler.assemble(tiles: [tile.coded(width: 16384, height: 16384)], grid: false)
        let refused = ImageError.tooManyPixels(width: 16384, height: 16384, limit: 100_000_000)
        #expect(throws: refused) { try ImageProbe.probe(bytes: bomb) }
        #expect(throws: refused) { try ImagePipeline.process(bytes: bomb) }
        #expect(throws: refused) { try ImageProbe.probe(fileAt: TestImages.temporaryFile(bomb, name: "bomb.heic")) }

        let lie = HEIFAssembler.assemble(tiles: [tile.coded(width: 2000, height: 2000)], grid: false)
        #expect(throws: ImageError.corrupt("HEVC image 1 is coded 2000×2000, its ispe says 64×64")) {
            try ImageProbe.probe(bytes: lie)
        }
        let padded = HEIFAssembler.assemble(tiles: [tile.coded(width: 128, height: 128)], grid: false)
        #expect(try ImageProbe.probe(bytes: padded).width == 64)
        #expect(throws: ImageError.self) {
            try ImageProbe.probe(
                bytes: HEIFAssembler.assemble(tiles: [tile.coded(width: 129, height: 64)], grid: false))
        }
        // The real file passes, and is decoded.
        let real = HEIFAssembler.assemble(tiles: [tile], grid: false)
        #expect(try ImagePipeline.process(bytes: real, spec: HEIFTests.spec).preview.width == 64)
    }

    /// A 2×2 grid of 64×64 tiles with one tile's SPS lying is refused; so is a tile whose data
    /// carries its own lying SPS (libheif hands it to libde265 after the hvcC's).
    @Test func probe_RefusesAGridWithOneLyingTile() throws {
        let tile = try Self.tile(width: 64, height: 64)
        var tiles = [tile, tile, tile, tile]
        #expect(try ImageProbe.probe(bytes: HEIFAssembler.assemble(tiles: tiles, columns: 2, grid: true)).width == 128)
        tiles[2] = tile.coded(width: 16384, height: 16384)
        let bomb = HEIFAssembler.assemble(tiles: tiles, columns: 2, grid: true)
        let refused = ImageError.tooManyPixels(width: 16384, height: 16384, limit: 100_000_000)
        #expect(throws: refused) { try ImageProbe.probe(bytes: bomb) }
        #expect(throws: refused) { try ImagePipeline.process(bytes: bomb) }

        var inData = tile
        let sps = tile.coded(width: 16384, height: 16384).sequenceParameterSets[0]
        inData.data = HEIFAssembler.u32(sps.count) + sps + tile.data
        tiles[2] = inData
        #expect(throws: refused) {
            try ImageProbe.probe(bytes: HEIFAssembler.assemble(tiles: tiles, columns: 2, grid: true))
        }
    }

    /// A phone's 12 MP grid (4032×3024 in 8×6 tiles of 512×512, the last row and column cropped)
    /// passes: each tile's SPS codes its ispe. Probed only (from the header).
    @Test func probe_PassesAPhonesTwelveMegapixelGrid() throws {
        let tile = try Self.tile(width: 512, height: 512)
        let grid = HEIFAssembler.assemble(
            tiles: [HEIFAssembler.Tile](repeating: tile, count: 48), columns: 8, grid: true, width: 4032, height: 3024)
        let info = try ImageProbe.probe(bytes: grid)
        #expect((info.width, info.height) == (4032, 3024))
        // Under a limit the grid fits but one tile's coded size does not, the tile is what is refused.
        #expect(throws: ImageError.tooManyPixels(width: 512, height: 512, limit: 200_000)) {
            try HEIFCodedSize.check(MemoryByteSource(bytes: grid), limits: ImageLimits(maxPixels: 200_000))
        }
    }

    /// A grid's tiles together are coded in at most twice `max_pixels`: four 64×64 tiles in a grid
    /// declaring 64×64 (each tile and the grid under a 5,000-pixel limit, 16,384 coded pixels in
    /// all) are refused; tiles overhanging a 120×120 grid under a limit of its size pass.
    @Test func probe_RefusesTilesCodedInMoreThanTwiceMaxPixels() throws {
        let tile = try Self.tile(width: 64, height: 64)
        let tiles = [tile, tile, tile, tile]
        let hidden = HEIFAssembler.assemble(tiles: tiles, columns: 2, grid: true, width: 64, height: 64)
        #expect(
            throws: ImageError.corrupt(
                "HEIF primary image is made of at least 12288 coded pixels, over twice the limit of 5000")
        ) { try ImageProbe.probe(bytes: hidden, limits: ImageLimits(maxPixels: 5000)) }
        #expect(try ImageProbe.probe(bytes: hidden, limits: ImageLimits(maxPixels: 8192)).width == 64)
        let overhanging = HEIFAssembler.assemble(tiles: tiles, columns: 2, grid: true, width: 120, height: 120)
        #expect(try ImageProbe.probe(bytes: overhanging, limits: ImageLimits(maxPixels: 14400)).width == 120)
    }

    /// AVIF: a 64×64 image whose AV1 sequence header declares a 16384×16384 largest frame, alone or
    /// as one tile of a grid, is refused like the HEVC one; the real one is decoded; every prefix
    /// of the sequence header is refused without crashing.
    @Test func probe_RefusesAnAV1SequenceHeaderLargerThanTheISPE() throws {
        let avif = try FixtureTools.heic(HEIFTests.solidPNG(TestImages.red), options: ["-q", "50"], avif: true)
        let tile = HEIFAssembler.Tile(heifEncOutput: avif, width: 64, height: 64)
        try #require(tile.itemType == "av01")
        let real = HEIFAssembler.assemble(tiles: [tile], grid: false)
        #expect(try ImageProbe.probe(bytes: real).format == .avif)
        #expect(try ImagePipeline.process(bytes: real, spec: HEIFTests.spec).preview.width == 64)
        let sizes = try AV1SequenceHeader.sizes(tile.data.count) { Array(tile.data.dropFirst($0).prefix($1)) }
        #expect(sizes.count == 1 && sizes[0] == (64, 64), "\(sizes)")

        let huge = tile.codedAV1(width: 16384, height: 16384)
        let refused = ImageError.tooManyPixels(width: 16384, height: 16384, limit: 100_000_000)
        let bomb = HEIFAssembler.assemble(tiles: [huge], grid: false)
        #expect(throws: refused) { try ImageProbe.probe(bytes: bomb) }
        #expect(throws: refused) { try ImagePipeline.process(bytes: bomb) }
        #expect(throws: refused) { try ImageProbe.probe(fileAt: TestImages.temporaryFile(bomb, name: "bomb.avif")) }
        #expect(throws: refused) {
            try ImageProbe.probe(
                bytes: HEIFAssembler.assemble(tiles: [tile, huge, tile, tile], columns: 2, grid: true))
        }
        #expect(
            try ImageProbe.probe(bytes: HEIFAssembler.assemble(tiles: [tile, tile], columns: 2, grid: true)).width
                == 128)
        let lie = HEIFAssembler.assemble(tiles: [tile.codedAV1(width: 2000, height: 2000)], grid: false)
        #expect(throws: ImageError.corrupt("AV1 image 1 is coded 2000×2000, its ispe says 64×64")) {
            try ImageProbe.probe(bytes: lie)
        }
        let padded = HEIFAssembler.assemble(tiles: [tile.codedAV1(width: 128, height: 128)], grid: false)
        #expect(try ImageProbe.probe(bytes: padded).width == 64)

        // The sequence header OBU's payload, cut anywhere before its size fields.
        let header = Array(huge.data.prefix(40))
        for count in 0..<header.count {
            _ = try? AV1SequenceHeader.sizes(count) { Array(header.dropFirst($0).prefix($1)) }
        }
        for _ in 0..<2000 {
            let garbage = [0x0A] + (0..<Int.random(in: 0..<20)).map { _ in UInt8.random(in: 0...255) }
            _ = try? AV1SequenceHeader.sizes(garbage.count) { Array(garbage.dropFirst($0).prefix($1)) }
        }
        // Every one- and two-byte OBU stream (an extension byte announced but missing, no size field).
        for first in 0...255 {
            for obus in [[UInt8(first)], [UInt8(first), 0x80]] {
                _ = try? AV1SequenceHeader.sizes(obus.count) { Array(obus.dropFirst($0).prefix($1)) }
            }
        }
        var noHeader = tile
        noHeader.data = []
        #expect(throws: ImageError.corrupt("AV1 image 1 has no sequence header")) {
            try ImageProbe.probe(bytes: HEIFAssembler.assemble(tiles: [noHeader], grid: false))
        }
    }

    /// Truncated and garbage SPSs are refused, never crash; so is an image with no SPS.
    @Test func truncatedGarbageAndMissingSPSs_AreRefused() throws {
        let tile = try Self.tile(width: 64, height: 64)
        let sps = tile.sequenceParameterSets[0]
        for count in 0..<sps.count {
            let prefix = Array(sps.prefix(count))
            // The size fields end within the first 20 bytes of heif-enc's SPS.
            if count < 16 { #expect(throws: ImageError.self) { try HEVCSequenceParameterSet.codedSize(nal: prefix) } }
            _ = try? HEVCSequenceParameterSet.codedSize(nal: prefix)
        }
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            let garbage =
                [0x42, 0x01] + (0..<Int.random(in: 0..<40, using: &generator)).map { _ in UInt8.random(in: 0...255) }
            _ = try? HEVCSequenceParameterSet.codedSize(nal: garbage)
        }
        let ones = [UInt8](repeating: 0x42, count: 2) + [UInt8](repeating: 0, count: 30)
        #expect(throws: ImageError.self) { try HEVCSequenceParameterSet.codedSize(nal: ones) }

        for (label, replaced) in [
            ("cut", Array(sps.prefix(10))), ("zeros", [0x42, 0x01] + [UInt8](repeating: 0, count: 40)),
            ("a PPS", [0x44, 0x01, 0xC1, 0x72, 0xB4, 0x62, 0x40]),
        ] {
            let file = HEIFAssembler.assemble(tiles: [tile.replacingSPS { _ in replaced }], grid: false)
            #expect(throws: ImageError.self, "\(label)") { try ImageProbe.probe(bytes: file) }
        }
        var noSPS = tile
        noSPS.hvcC = HEIFAssembler.box("hvcC", Array(tile.hvcC[8..<30]) + [0])
        #expect(throws: ImageError.corrupt("HEVC image 1 has no sequence parameter set")) {
            try ImageProbe.probe(bytes: HEIFAssembler.assemble(tiles: [noSPS], grid: false))
        }
    }
}
