import Foundation
import GalleryTestSupport
import Testing

@testable import Imaging

/// HEIC and AVIF originals whose nclx transfer is not sRGB's (issue #28's "10-bit images" with
/// "the right colours", decision 074): HDR photos in PQ and HLG tone mapped to SDR with BT.2390's
/// EETF on max(R, G, B), BT.2408's reference white as SDR white's scale; linear and plain-gamma
/// originals converted exactly. The fixtures are 10-bit files `heif-enc` codes from a 16-bit PNG
/// of patches whose light is known (`HDRFixtures`).
@Suite struct HEIFHDRTests {
    /// Keeps a 7-patch strip at its size (448×64), at a quality where the JPEG moves colours little.
    static let spec = DerivativeSpec(thumbnailShortEdge: 32, quality: 95)

    /// Display light in cd/m², BT.2020 primaries: black, 18% grey (of reference white), reference
    /// white (BT.2408's 203), 400, the 1000 cd/m² peak, saturated BT.2020 red and green.
    static let patches: [(Double, Double, Double)] = [
        (0, 0, 0), (36.54, 36.54, 36.54), (203, 203, 203), (400, 400, 400), (1000, 1000, 1000), (203, 0, 0),
        (0, 203, 0),
    ]
    /// Where decision 074's mapping puts them (the figures of its model, `s25-h25-data/model.py`).
    static let mapped: [(Int, Int, Int)] = [
        (0, 0, 0), (118, 118, 118), (229, 229, 229), (250, 250, 250), (255, 255, 255), (214, 0, 56), (0, 214, 121),
    ]

    /// The mean colour of the 16×16 centre of each 64×64 patch of a derivative.
    static func patchColours(_ jpeg: [UInt8], count: Int) throws -> [(Int, Int, Int)] {
        let image = try TestImages.decode(jpeg)
        let side = image.width / count
        return (0..<count).map { i in
            var sum = (0, 0, 0)
            for y in (image.height / 2 - 8)..<(image.height / 2 + 8) {
                for x in (i * side + side / 2 - 8)..<(i * side + side / 2 + 8) {
                    let p = image.rgb(x: x, y: y)
                    sum = (sum.0 + Int(p.r), sum.1 + Int(p.g), sum.2 + Int(p.b))
                }
            }
            return (sum.0 / 256, sum.1 / 256, sum.2 / 256)
        }
    }

    static func close(_ a: (Int, Int, Int), _ b: (Int, Int, Int), _ tolerance: Int) -> Bool {
        abs(a.0 - b.0) <= tolerance && abs(a.1 - b.1) <= tolerance && abs(a.2 - b.2) <= tolerance
    }

    @Test(arguments: [HDRFixtures.Transfer.pq, .hlg], [false, true])
    func fixtures_Are10Bit_AndTheirNclxSaysTheTransfer(_ transfer: HDRFixtures.Transfer, avif: Bool) throws {
        let bytes = try HDRFixtures.file(patches: Self.patches, transfer: transfer, avif: avif)
        let file = try HEIFFile(bytes: bytes)
        #expect(file.lumaBits == 10)
        let nclx = try #require(file.nclx())
        #expect((nclx.primaries, nclx.transfer) == (9, transfer.code))
        #expect(try ImageProbe.probe(bytes: bytes).format == (avif ? .avif : .heif))
        // Why the fixtures carry a `colr` box of their own: libheif 1.15's heif-enc writes none
        // for a HEIC whatever its nclx options say.
        let plain = try HDRFixtures.heifEnc(
            HDRFixtures.png16(width: 64, height: 64) { _, _ in [30000, 30000, 30000] },
            options: ["-b", "10", "--colour_primaries", "9", "--transfer_characteristic", "16"], avif: false)
        #expect(try HEIFFile(bytes: plain).nclx() == nil)
    }

    @Test(arguments: [HDRFixtures.Transfer.pq, .hlg], [false, true])
    func process_ToneMapsHDRToSDR(_ transfer: HDRFixtures.Transfer, avif: Bool) throws {
        let bytes = try HDRFixtures.file(patches: Self.patches, transfer: transfer, avif: avif)
        let result = try ImagePipeline.process(bytes: bytes, spec: Self.spec)
        #expect((result.preview.width, result.preview.height) == (448, 64))
        let c = try Self.patchColours(result.preview.jpeg, count: Self.patches.count)
        let label = "\(transfer) \(avif ? "avif" : "heic"): \(c)"
        // Black, 18% grey and reference white where the mapping puts them (grey exactly: below the knee).
        for i in 0..<3 { #expect(Self.close(c[i], Self.mapped[i], 5), "patch \(i), \(label)") }
        // The highlights roll off: 400 and 1000 cd/m² brighter than reference white and apart, the peak at white.
        #expect(c[3].1 >= c[2].1 + 12 && c[4].1 >= c[3].1 + 3 && c[4].1 >= 250, "\(label)")
        #expect(Self.close(c[3], Self.mapped[3], 5) && Self.close(c[4], Self.mapped[4], 5), "\(label)")
        // Saturated BT.2020 red and green stay red and green, inside sRGB, at their luminance's grey line.
        #expect(Self.close(c[5], Self.mapped[5], 10), "red, \(label)")
        #expect(Self.close(c[6], Self.mapped[6], 10), "green, \(label)")
        #expect(c[5].0 > 3 * max(c[5].1, c[5].2) && c[6].1 > max(c[6].0, c[6].2) + 80, "\(label)")
    }

    /// The thumbnail's dominant colour is made of the tone-mapped pixels: a reference-white photo's is
    /// 229 grey, not the 148 its PQ code values would read as sRGB.
    @Test(arguments: [HDRFixtures.Transfer.pq, .hlg])
    func process_DominantColorIsOfTheToneMappedPixels(_ transfer: HDRFixtures.Transfer) throws {
        let bytes = try HDRFixtures.file(patches: [(203, 203, 203), (203, 203, 203)], transfer: transfer)
        let result = try ImagePipeline.process(bytes: bytes, spec: Self.spec)
        let hex = result.dominantColor.dropFirst()
        let rgb = stride(from: 0, to: 6, by: 2).map { Int(hex.dropFirst($0).prefix(2), radix: 16) ?? -1 }
        #expect(rgb.allSatisfy { abs($0 - 229) <= 4 }, "\(result.dominantColor)")
    }

    /// A phone's HDR photo is grid-tiled and may be rotated: libheif assembles the 16-bit tiles and
    /// applies `irot` in the planar decode as in the 8-bit one (a 2×1 grid of a reference-white tile
    /// and a 1000 cd/m² one, turned a quarter anticlockwise: white at the bottom, the peak on top).
    @Test func process_ToneMapsAGridTiledRotatedPQPhoto() throws {
        let tiles = try [(203.0, 203.0, 203.0), (1000.0, 1000.0, 1000.0)].map { light in
            let code = HDRFixtures.Transfer.pq.signal(light)
            let png = HDRFixtures.png16(width: 64, height: 64) { _, _ in
                [code.0, code.1, code.2].map { Int(($0 * 65535).rounded()) }
            }
            let coded = try HDRFixtures.heifEnc(
                png, options: ["-b", "10", "-q", "95", "-p", "chroma=444"], avif: false)
            return HEIFAssembler.Tile(heifEncOutput: coded, width: 64, height: 64)
        }
        let file = HEIFAssembler.assemble(
            tiles: tiles, columns: 2, grid: true, transforms: [.irot(quarters: 1)],
            colour: .nclx(primaries: 9, transfer: 16))
        let result = try ImagePipeline.process(bytes: file, spec: Self.spec)
        #expect((result.info.width, result.info.height) == (64, 128))
        let image = try TestImages.decode(result.preview.jpeg)
        let (top, bottom) = (image.rgb(x: 32, y: 32), image.rgb(x: 32, y: 96))
        #expect(abs(Int(top.g) - 255) <= 5 && abs(Int(bottom.g) - 229) <= 5, "\(top) \(bottom)")
    }

    /// A PQ original's `clli` sets the peak the roll-off ends at: at 4000 cd/m², 1000 is below white
    /// and reference white darker than at the 1000 assumed without it.
    @Test func process_RollsOffToThePeakTheClliBoxSays() throws {
        let patches = Array(Self.patches[2...4])
        let bytes = try HDRFixtures.file(patches: patches, transfer: .pq, lightLevel: 4000)
        #expect(try HEIFFile(bytes: bytes).decodeKeepingBits()?.peakLuminance == 4000)
        let c = try Self.patchColours(ImagePipeline.process(bytes: bytes, spec: Self.spec).preview.jpeg, count: 3)
        // decision 074's model at a 4000 cd/m² peak: 208, 232, 250.
        for (got, expected) in zip(c, [208, 232, 250]) { #expect(abs(got.1 - expected) <= 5, "\(c)") }
    }

    /// Linear (8), 2.2-gamma (4) and 2.8-gamma (5) originals, 8 to 12-bit, are their sRGB (13) twin's colours.
    @Test(arguments: [(HDRFixtures.Transfer.linear, 10), (.gamma22, 10), (.gamma22, 8), (.linear, 12), (.gamma28, 10)])
    func process_ConvertsLinearAndGammaExactly(_ transfer: HDRFixtures.Transfer, bits: Int) throws {
        // Linear light of sRGB (200, 100, 50), 18% grey, white, (30, 60, 90), a light blue, black.
        let light: [(Double, Double, Double)] = [
            (0.5776, 0.1274, 0.0319), (0.18, 0.18, 0.18), (1, 1, 1), (0.0129, 0.0452, 0.1022), (0.3, 0.5, 0.9),
            (0, 0, 0),
        ]
        let twin = try HDRFixtures.file(patches: light, transfer: .sRGB, primaries: 1)
        let converted = try HDRFixtures.file(patches: light, transfer: transfer, primaries: 1, bits: bits)
        #expect(try HEIFFile(bytes: converted).lumaBits == bits)
        let expected = try Self.patchColours(ImagePipeline.process(bytes: twin, spec: Self.spec).preview.jpeg, count: 6)
        let got = try Self.patchColours(ImagePipeline.process(bytes: converted, spec: Self.spec).preview.jpeg, count: 6)
        for (g, e) in zip(got, expected) {
            #expect(Self.close(g, e, bits == 8 ? 4 : 3), "\(transfer) \(bits)-bit: \(got) against \(expected)")
        }
    }

    /// The transfers read as sRGB decode as before, byte for byte: sRGB's own (13), the SDR camera
    /// curves (1, 6, 14), unspecified (2), and one galleryd does not convert (17, DCI), which is
    /// logged once; their converter is the plain widening one.
    @Test func process_ReadsTheSRGBLikeTransfersAsBefore() throws {
        let light: [(Double, Double, Double)] = [(0.5776, 0.1274, 0.0319), (0.0129, 0.0452, 0.1022)]
        for bits in [8, 10] {
            let png = HDRFixtures.png16(width: 128, height: 64, eightBit: bits == 8) { x, _ in
                let c = HDRFixtures.Transfer.sRGB.signal(light[x / 64])
                return [c.0, c.1, c.2].map { Int($0 * (bits == 8 ? 255 : 65535)) }
            }
            let coded = try HDRFixtures.heifEnc(
                png, options: bits == 8 ? ["-q", "90"] : ["-b", "10", "-q", "90"], avif: false)
            let tile = HEIFAssembler.Tile(heifEncOutput: coded, width: 128, height: 64)
            let plain = try ImagePipeline.process(
                bytes: HEIFAssembler.assemble(tiles: [tile], grid: false, colour: .nclx(primaries: 1)), spec: Self.spec)
            for transfer in [1, 2, 6, 14, 17] {
                let file = HEIFAssembler.assemble(
                    tiles: [tile], grid: false, colour: .nclx(primaries: 1, transfer: transfer))
                let result = try ImagePipeline.process(bytes: file, spec: Self.spec)
                #expect(result.preview.jpeg == plain.preview.jpeg, "\(bits)-bit, transfer \(transfer)")
                #expect(result.thumbnail.jpeg == plain.thumbnail.jpeg, "\(bits)-bit, transfer \(transfer)")
                #expect(RasterRowConverter(layout: .rgb, nclxPrimaries: 1, nclxTransfer: transfer).isByteCopy)
            }
        }
        #expect(TransferCurve.loggedCodes.contains(17) && !TransferCurve.loggedCodes.contains(13))
        #expect(!RasterRowConverter(layout: .rgb, nclxPrimaries: 1, nclxTransfer: 16).isByteCopy)
    }

    /// The curves' constants against the figures BT.2100 and BT.2408 give: PQ's 10 000 cd/m² at 1,
    /// reference white at 58% PQ and 75% HLG; the roll-off's knee, reference white and peak.
    @Test func curves_MatchBT2100AndBT2408() throws {
        #expect(abs(TransferCurve.pqLuminance(1) - 10000) < 0.01)
        #expect(abs(TransferCurve.pqSignal(203) - 0.5806) < 0.0005)
        #expect(abs(TransferCurve.pqLuminance(TransferCurve.pqSignal(36.54)) - 36.54) < 0.001)
        // HLG 75% is reference white on a 1000 cd/m² display: Fd = 1000 · E^1.2 for grey.
        #expect(abs(1000 * pow(TransferCurve.hlgSceneLight(0.75), 1.2) - 203) < 1)
        #expect(
            abs(TransferCurve.hlgSceneLight(0.5) - 1.0 / 12) < 1e-9 && abs(TransferCurve.hlgSceneLight(1) - 1) < 1e-6)
        let map = try #require(HDRToneMap(peakLuminance: 1000))
        #expect(abs(map.knee * 203 - 87.8) < 0.5 && abs(map.sourcePeak - 1000 / 203) < 1e-4)
        #expect(map.map(0.18) == 0.18 && abs(map.map(1) - 0.7835) < 0.001 && map.map(map.sourcePeak) == 1)
        var last: Float = 0
        for i in 0...2000 {
            let m = Float(i) / 400
            let out = map.map(m)
            #expect(out >= last && out <= 1, "\(m)")
            last = out
        }
        #expect(HDRToneMap(peakLuminance: 203) == nil)
    }
}
