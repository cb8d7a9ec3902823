import Testing

@testable import Imaging

/// `PNGRowDecoder`: the rows of libpng's whole decode, a band at a time, and failures part way
/// through an image thrown, never a crash.
@Suite struct PNGRowDecoderTests {
    /// 53×37 (three bands and a bit) of varied samples in the writer's colour type and depth.
    static func writer(_ colorType: PNGWriter.ColorType, bitDepth: Int = 8) -> PNGWriter {
        let scale = bitDepth == 16 ? 257 : 1
        return PNGWriter(width: 53, height: 37, colorType: colorType, bitDepth: bitDepth) { x, y in
            // Low bytes that differ from the high ones in 16-bit files, so scaling them is exercised.
            let samples = [(x * 5 + y) & 254, (y * 7) & 254, (x ^ y) * 3 & 254, (x * 11 + 40) & 254]
            guard colorType != .palette else { return [(x + y) % 3] }
            return samples.prefix(colorType.channels).map { $0 * scale + (bitDepth == 16 ? (x & 1) * 3 : 0) }
        }
    }

    /// Every row the decoder hands out, in order.
    static func rows(_ rows: any RasterRows) throws -> [UInt8] {
        var out: [UInt8] = []
        try rows.forEachRun { first, stride, count in
            for r in 0..<count {
                out += UnsafeBufferPointer(start: first + r * stride, count: rows.width * rows.layout.bytesPerPixel)
            }
        }
        return out
    }

    @Test(arguments: [
        "gray8", "gray16", "rgb8", "rgb16", "palette", "paletteAlpha", "grayAlpha", "rgba8", "rgba16",
        "linearGamma", "gammaWithICC",
    ])
    func rows_AreTheWholeDecodesRows(kind: String) throws {
        var writer: PNGWriter
        switch kind {
        case "gray8": writer = Self.writer(.gray)
        case "gray16": writer = Self.writer(.gray, bitDepth: 16)
        case "rgb8": writer = Self.writer(.rgb)
        case "rgb16": writer = Self.writer(.rgb, bitDepth: 16)
        case "palette", "paletteAlpha":
            writer = Self.writer(.palette)
            writer.palette = [(200, 100, 50, 255), (10, 20, 30, kind == "palette" ? 255 : 0), (90, 250, 5, 255)]
        case "grayAlpha": writer = Self.writer(.grayAlpha)
        case "rgba8": writer = Self.writer(.rgba)
        case "rgba16": writer = Self.writer(.rgba, bitDepth: 16)
        case "linearGamma":
            writer = Self.writer(.rgb)
            writer.gamma = 100_000
        default:
            // iCCP describes the colour: gAMA is not applied (PNG 3rd edition §11.3.2.3).
            writer = Self.writer(.rgb)
            writer.gamma = 100_000
            writer.iccProfile = TestImages.iccProfile(size: 600)
        }
        let png = writer.encode()
        let decoder = try PNGRowDecoder.open(fileAt: nil, bytes: png, limits: ImageLimits())
        let whole = try PNGDecoder.decode(bytes: png, limits: ImageLimits())
        #expect((decoder.width, decoder.height, decoder.layout) == (whole.width, whole.height, whole.layout))
        let banded = try Self.rows(decoder)
        let expected = try Self.rows(whole)
        #expect(banded.count == expected.count)
        let worst = zip(banded, expected).map { abs(Int($0) - Int($1)) }.max() ?? 0
        #expect(worst <= 1, "\(kind): rows differ by up to \(worst)")
    }

    /// An Adam7 file is read whole, in one run, to exactly the rows of the same image stored without
    /// interlacing (the same transforms). libpng 1.6.39's simplified API, which read these files
    /// before, misplaced the rows of 16-bit ones (samples off by up to 255): it is no reference here.
    @Test(arguments: [(PNGWriter.ColorType.rgb, 16), (.rgba, 16), (.rgb, 8), (.gray, 8), (.palette, 8)])
    func interlacedFiles_AreReadWhole_InOneRun_ToTheRowsOfTheSameImageNotInterlaced(
        _ colorType: PNGWriter.ColorType, bitDepth: Int
    ) throws {
        var writer = Self.writer(colorType, bitDepth: bitDepth)
        writer.palette = [(200, 100, 50, 255), (10, 20, 30, 0), (90, 250, 5, 255)]
        let plain = writer.encode()
        writer.interlaced = true
        let png = writer.encode()
        for decoder in [
            try PNGRowDecoder.open(fileAt: nil, bytes: png, limits: ImageLimits()),
            try PNGRowDecoder.open(
                fileAt: TestImages.temporaryFile(png, name: "a.png"), bytes: nil, limits: ImageLimits()),
        ] {
            #expect(decoder.interlaced)
            var runs = 0
            var pixels: [UInt8] = []
            try decoder.forEachRun { first, stride, count in
                runs += 1
                for r in 0..<count {
                    pixels += UnsafeBufferPointer(
                        start: first + r * stride, count: decoder.width * decoder.layout.bytesPerPixel)
                }
            }
            #expect(runs == 1)
            let expected = try Self.rows(PNGRowDecoder.open(fileAt: nil, bytes: plain, limits: ImageLimits()))
            #expect(pixels == expected, "\(colorType), \(bitDepth) bits")
        }
        #expect(try !PNGRowDecoder.open(fileAt: nil, bytes: plain, limits: ImageLimits()).interlaced)
    }

    @Test func truncatedImageData_ThrowsPartWay_FromMemoryAndFromAFile() throws {
        var state: UInt64 = 9
        let png = PNGWriter(width: 200, height: 120, colorType: .rgb) { _, _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return [Int(state >> 56), Int(state >> 48 & 255), Int(state >> 40 & 255)]
        }.encode()
        let cut = Array(png.prefix(png.count * 6 / 10))
        let path = try TestImages.temporaryFile(cut, name: "cut.png")
        for decoder in [
            try PNGRowDecoder.open(fileAt: nil, bytes: cut, limits: ImageLimits()),
            try PNGRowDecoder.open(fileAt: path, bytes: nil, limits: ImageLimits()),
        ] {
            var handedOut = 0
            #expect(throws: ImageError.truncated) {
                try decoder.forEachRun { _, _, count in handedOut += count }
            }
            #expect(handedOut > 0 && handedOut < 120, "\(handedOut) rows before the end")
        }
        #expect(throws: ImageError.truncated) { try ImagePipeline.process(fileAt: path) }
    }

    @Test func corruptFiles_AreErrors() throws {
        let png = Self.writer(.rgb).encode()
        // Damaged image data: zlib or a CRC complains.
        var corrupt = png
        for i in (png.count - 60)..<(png.count - 30) { corrupt[i] ^= 0x5A }
        let decoder = try PNGRowDecoder.open(fileAt: nil, bytes: corrupt, limits: ImageLimits())
        #expect(throws: ImageError.self) { try Self.rows(decoder) }
        // A header that is not a PNG's, a missing file.
        #expect(throws: ImageError.self) {
            try PNGRowDecoder.open(fileAt: nil, bytes: Array(png.prefix(12)) + [0, 0, 0, 0], limits: ImageLimits())
        }
        #expect(throws: ImageError.self) {
            try PNGRowDecoder.open(fileAt: "/nonexistent/a.png", bytes: nil, limits: ImageLimits())
        }
        #expect(throws: ImageError.tooManyPixels(width: 53, height: 37, limit: 1000)) {
            try PNGRowDecoder.open(fileAt: nil, bytes: png, limits: ImageLimits(maxPixels: 1000))
        }
    }
}
