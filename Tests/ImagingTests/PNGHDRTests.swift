import GalleryTestSupport
import Testing

@testable import Imaging

/// HDR PNGs: a `cICP` chunk (PNG 3rd edition) naming PQ or HLG is converted as a HEIF's nclx is
/// (decision 074): an opaque 16-bit file read with its 16 bits, one with alpha at 8 bits through
/// the same curves; the file's `iCCP` is not carried then. A `cICP` naming an SDR curve leaves
/// the file as it was read before.
@Suite struct PNGHDRTests {
    /// HEIFHDRTests' seven patches, 64×64 each, as PNG samples of `transfer` (16-bit, or 8-bit
    /// RGBA when `alpha`), tagged BT.2020 with that transfer.
    static func strip(_ transfer: HDRFixtures.Transfer, alpha: Bool = false, icc: [UInt8]? = nil) -> [UInt8] {
        let codes = HEIFHDRTests.patches.map { transfer.signal($0) }
        let top = alpha ? 255.0 : 65535.0
        var writer = PNGWriter(width: 448, height: 64, colorType: alpha ? .rgba : .rgb) { x, _ in
            let c = codes[x / 64]
            return [c.0, c.1, c.2].map { Int(($0 * top).rounded()) } + (alpha ? [255] : [])
        }
        writer.bitDepth = alpha ? 8 : 16
        writer.cicp = [9, UInt8(transfer.code), 0, 1]
        writer.iccProfile = icc
        return writer.encode()
    }

    @Test(arguments: [HDRFixtures.Transfer.pq, .hlg], [false, true])
    func process_ToneMapsAnHDRPNG(_ transfer: HDRFixtures.Transfer, alpha: Bool) throws {
        let result = try ImagePipeline.process(bytes: Self.strip(transfer, alpha: alpha), spec: HEIFHDRTests.spec)
        let c = try HEIFHDRTests.patchColours(result.preview.jpeg, count: 7)
        // At 8 bits a PQ code step is up to 3% of the light: a wider tolerance.
        let tolerance = alpha ? 8 : 5
        for i in 0..<5 {
            #expect(HEIFHDRTests.close(c[i], HEIFHDRTests.mapped[i], tolerance), "patch \(i): \(c)")
        }
        for i in 5..<7 { #expect(HEIFHDRTests.close(c[i], HEIFHDRTests.mapped[i], 10), "patch \(i): \(c)") }
        #expect(c[3].1 > c[2].1 + 10 && c[4].1 > c[3].1, "\(c)")
    }

    @Test func open_Keeps16BitsOfAnOpaqueHDRPNG_AndReadsItsCICP() throws {
        let decoder = try PNGRowDecoder.open(fileAt: nil, bytes: Self.strip(.pq), limits: ImageLimits())
        #expect(decoder.layout == .rgb16 && decoder.bitsPerSample == 16)
        #expect(decoder.cicp?.primaries == 9 && decoder.cicp?.transfer == 16)
        let withAlpha = try PNGRowDecoder.open(fileAt: nil, bytes: Self.strip(.hlg, alpha: true), limits: ImageLimits())
        #expect(withAlpha.layout == .rgba && withAlpha.bitsPerSample == 8 && withAlpha.cicp?.transfer == 18)
    }

    /// An HDR PNG's light is converted to sRGB: an ICC profile beside its `cICP` is not carried.
    @Test func process_DropsTheICCProfileOfAConvertedPNG() throws {
        let profile = TestImages.iccProfile(size: 700)
        let result = try ImagePipeline.process(bytes: Self.strip(.pq, icc: profile), spec: HEIFHDRTests.spec)
        #expect(TestImages.segments(result.preview.jpeg).filter { $0.code == 0xE2 }.isEmpty)
    }

    /// A `cICP` naming sRGB's curve changes nothing: the same bytes as the file without it, with or
    /// without a `gAMA` (which stays applied beside it, as before decision 074).
    @Test(arguments: [nil, 100000] as [UInt32?])
    func process_LeavesAnSDRCICPAsBefore(gamma: UInt32?) throws {
        var writer = PNGWriter(width: 96, height: 64, colorType: .rgb) { x, y in [x * 600, y * 900, 40000] }
        writer.bitDepth = 16
        writer.gamma = gamma
        let plain = try ImagePipeline.process(bytes: writer.encode(), spec: HEIFHDRTests.spec)
        writer.cicp = [1, 13, 0, 1]
        let tagged = try ImagePipeline.process(bytes: writer.encode(), spec: HEIFHDRTests.spec)
        #expect(tagged.preview.jpeg == plain.preview.jpeg && tagged.thumbnail.jpeg == plain.thumbnail.jpeg)
    }

    /// A narrow-range `cICP` (full-range flag 0) is not read: the file is read as before.
    @Test func open_IgnoresANarrowRangeCICP() throws {
        var writer = PNGWriter(width: 32, height: 16, colorType: .rgb) { x, y in [x * 2000, y * 3000, 40000] }
        writer.bitDepth = 16
        writer.cicp = [9, 16, 0, 0]
        let decoder = try PNGRowDecoder.open(fileAt: nil, bytes: writer.encode(), limits: ImageLimits())
        #expect(decoder.cicp == nil && decoder.layout == .rgb && decoder.bitsPerSample == 8)
    }

    /// `png` with `chunks` (type, data) inserted after its IHDR.
    static func inserting(_ chunks: [(String, [UInt8])], into png: [UInt8]) -> [UInt8] {
        let afterIHDR = 8 + 12 + 13
        return Array(png[..<afterIHDR]) + chunks.flatMap { PNGWriter.chunk($0.0, $0.1) } + Array(png[afterIHDR...])
    }

    /// Unknown ancillary chunks, however many and large, are dropped as they are read, a `cICP` of
    /// the wrong length is skipped and the first usable one is read; an unknown critical chunk is
    /// refused as before.
    @Test func open_DropsUnknownChunks_AndReadsTheFirstUsableCICP() throws {
        var writer = PNGWriter(width: 32, height: 16, colorType: .rgb) { x, y in [x * 2000, y * 3000, 40000] }
        writer.bitDepth = 16
        let big = [UInt8](repeating: 7, count: 1 << 20)
        let chunks: [(String, [UInt8])] =
            [("cICP", [9, 18, 0, 1, 0]), ("cICP", [9, 16, 0, 1]), ("cICP", [1, 8, 0, 1])]
            + (0..<64).map { _ in ("zzZz", big) }
        let png = Self.inserting(chunks, into: writer.encode())
        let decoder = try PNGRowDecoder.open(fileAt: nil, bytes: png, limits: ImageLimits())
        #expect(decoder.cicp?.primaries == 9 && decoder.cicp?.transfer == 16 && decoder.layout == .rgb16)
        let result = try ImagePipeline.process(bytes: png, spec: HEIFHDRTests.spec)
        #expect(result.preview.width == 32)
        let critical = Self.inserting([("ZZZZ", [1, 2, 3])], into: writer.encode())
        #expect(throws: ImageError.self) {
            _ = try PNGRowDecoder.open(fileAt: nil, bytes: critical, limits: ImageLimits())
        }
    }
}
