import Testing

@testable import Imaging

@Suite struct PNGTests {
    typealias RGB = (UInt8, UInt8, UInt8)
    static let spec = DerivativeSpec(thumbnailShortEdge: 32, previewLongEdge: 64, quality: 90)

    /// 96×64, red, green / blue, yellow, 8-bit RGB.
    static func quadrantsPNG(interlaced: Bool = false, bitDepth: Int = 8) -> [UInt8] {
        let colors = [TestImages.red, TestImages.green, TestImages.blue, TestImages.yellow]
        let scale = bitDepth == 16 ? 257 : 1
        return PNGWriter(width: 96, height: 64, colorType: .rgb, bitDepth: bitDepth, interlaced: interlaced) { x, y in
            let c = colors[(y < 32 ? 0 : 2) + (x < 48 ? 0 : 1)]
            return [Int(c.0) * scale, Int(c.1) * scale, Int(c.2) * scale]
        }.encode()
    }

    /// The mean colour of an output JPEG.
    static func meanColor(_ jpeg: [UInt8]) throws -> (r: UInt8, g: UInt8, b: UInt8) {
        let image = try TestImages.decode(jpeg)
        return image.rgb(x: image.width / 2, y: image.height / 2)
    }

    @Test(arguments: [false, true])
    func process_MakesUprightDerivatives(interlaced: Bool) throws {
        let result = try ImagePipeline.process(bytes: Self.quadrantsPNG(interlaced: interlaced), spec: Self.spec)
        #expect(result.info.format == .png)
        #expect((result.info.displayWidth, result.info.displayHeight) == (96, 64))
        #expect((result.preview.width, result.preview.height) == (64, 43))
        #expect((result.thumbnail.width, result.thumbnail.height) == (48, 32))
        try ImagePipelineTests.expectUprightQuadrants(result.preview.jpeg, width: 64, height: 43)
        try ImagePipelineTests.expectUprightQuadrants(result.thumbnail.jpeg, width: 48, height: 32)
    }

    @Test func process_MakesTheThumbnailFromThePreview_OnTwoThreads() throws {
        // Preview 64×43 is at least twice the 24×16 thumbnail: the split resampling path.
        let spec = DerivativeSpec(thumbnailShortEdge: 16, previewLongEdge: 64, quality: 90)
        let result = try ImagePipeline.process(bytes: Self.quadrantsPNG(), spec: spec)
        #expect(result.thumbnailSource == .preview)
        try ImagePipelineTests.expectUprightQuadrants(result.preview.jpeg, width: 64, height: 43)
        try ImagePipelineTests.expectUprightQuadrants(result.thumbnail.jpeg, width: 24, height: 16)
    }

    /// Every colour type and depth decodes to the same colour: (200, 100, 50), or grey 128.
    @Test(arguments: ["gray8", "gray16", "rgb16", "palette", "grayAlpha", "rgba16", "rgbInterlaced16"])
    func process_DecodesEveryKind(kind: String) throws {
        let rgb = [200, 100, 50]
        var writer = PNGWriter(width: 40, height: 30, colorType: .rgb) { _, _ in rgb }
        var expected: RGB = (200, 100, 50)
        switch kind {
        case "gray8":
            writer.colorType = .gray
            writer.pixel = { _, _ in [128] }
            expected = (128, 128, 128)
        case "gray16":
            writer.colorType = .gray
            writer.bitDepth = 16
            writer.pixel = { _, _ in [128 * 257] }
            expected = (128, 128, 128)
        case "rgb16":
            writer.bitDepth = 16
            writer.pixel = { _, _ in rgb.map { $0 * 257 } }
        case "palette":
            writer.colorType = .palette
            writer.palette = [(0, 0, 0, 255), (200, 100, 50, 255)]
            writer.pixel = { _, _ in [1] }
        case "grayAlpha":
            writer.colorType = .grayAlpha
            writer.pixel = { _, _ in [128, 255] }
            expected = (128, 128, 128)
        case "rgba16":
            writer.colorType = .rgba
            writer.bitDepth = 16
            writer.pixel = { _, _ in rgb.map { $0 * 257 } + [65535] }
        default:
            writer.bitDepth = 16
            writer.interlaced = true
            writer.pixel = { _, _ in rgb.map { $0 * 257 } }
        }
        let result = try ImagePipeline.process(bytes: writer.encode(), spec: Self.spec)
        let color = try Self.meanColor(result.preview.jpeg)
        #expect(ImagePipelineTests.close(color, expected, tolerance: 3), "\(kind): \(color)")
    }

    @Test func process_FlattensAlphaOntoWhite() throws {
        // Transparent everywhere: white, whatever the hidden colour.
        let clear = PNGWriter(width: 40, height: 30, colorType: .rgba) { _, _ in [10, 200, 10, 0] }.encode()
        let result = try ImagePipeline.process(bytes: clear, spec: Self.spec)
        #expect(result.dominantColor == "#ffffff")
        #expect(ImagePipelineTests.close(try Self.meanColor(result.preview.jpeg), (255, 255, 255), tolerance: 2))
        // Half-transparent red through a palette's tRNS: halfway to white.
        let half = PNGWriter(width: 40, height: 30, colorType: .palette, palette: [(255, 0, 0, 128)]) { _, _ in [0] }
            .encode()
        let blended = try ImagePipeline.process(bytes: half, spec: Self.spec)
        #expect(blended.dominantColor == "#ff7f7f")
    }

    @Test func process_HonoursGamma() throws {
        // Linear-light 128 (gAMA 1.0) is sRGB ≈ 188.
        let linear = PNGWriter(width: 40, height: 30, colorType: .gray, gamma: 100_000) { _, _ in [128] }.encode()
        let color = try Self.meanColor(ImagePipeline.process(bytes: linear, spec: Self.spec).preview.jpeg)
        #expect(ImagePipelineTests.close(color, (188, 188, 188), tolerance: 3), "\(color)")
    }

    /// An Adam7 file is the same picture as the same samples stored without interlacing: the same
    /// derivatives (16-bit files included, whose rows libpng's simplified API misplaced).
    @Test(arguments: [8, 16])
    func process_GivesTheSameDerivatives_InterlacedOrNot(bitDepth: Int) throws {
        var writer = PNGRowDecoderTests.writer(.rgb, bitDepth: bitDepth)
        let plain = try ImagePipeline.process(bytes: writer.encode(), spec: Self.spec)
        writer.interlaced = true
        let interlaced = try ImagePipeline.process(bytes: writer.encode(), spec: Self.spec)
        let (a, b) = (try TestImages.decode(plain.preview.jpeg), try TestImages.decode(interlaced.preview.jpeg))
        #expect((a.width, a.height) == (b.width, b.height))
        let worst = zip(a.bytes, b.bytes).map { abs(Int($0) - Int($1)) }.max() ?? 0
        #expect(worst == 0, "\(bitDepth) bits: previews differ by up to \(worst)")
        #expect(interlaced.dominantColor == plain.dominantColor)
    }

    /// `gAMA` says how samples encode light only when neither `sRGB` nor `iCCP` does (PNG 3rd
    /// edition §11.3.2.3, §11.3.2.5): beside either, a linear `gAMA` is ignored, interlaced or not,
    /// so a file's colours do not depend on how its rows are stored.
    @Test(arguments: [("sRGB", false), ("sRGB", true), ("iCCP", false), ("iCCP", true)])
    func process_IgnoresGamma_BesideSRGBOrICCP(chunk: String, interlaced: Bool) throws {
        var writer = PNGWriter(width: 40, height: 30, colorType: .rgb, interlaced: interlaced, gamma: 100_000) { _, _ in
            [128, 128, 128]
        }
        if chunk == "sRGB" {
            writer.srgbIntent = 0
        } else {
            // A profile libpng accepts (a Display P3 matrix/TRC one), which the derivatives carry.
            writer.iccProfile = SRGBProfileTests.profile(colorants: SRGBProfileTests.displayP3)
        }
        let result = try ImagePipeline.process(bytes: writer.encode(), spec: Self.spec)
        #expect(result.info.iccProfile == writer.iccProfile)
        let color = try Self.meanColor(result.preview.jpeg)
        #expect(ImagePipelineTests.close(color, (128, 128, 128), tolerance: 3), "\(chunk), \(interlaced): \(color)")
    }

    @Test func process_CarriesTheICCProfile() throws {
        let profile = TestImages.iccProfile(size: 700)
        let png = PNGWriter(width: 40, height: 30, colorType: .rgb, iccProfile: profile) { _, _ in [200, 100, 50] }
            .encode()
        #expect(try ImageProbe.probe(bytes: png).iccProfile == profile)
        let result = try ImagePipeline.process(bytes: png, spec: Self.spec)
        for jpeg in [result.preview.jpeg, result.thumbnail.jpeg] {
            let chunks = TestImages.segments(jpeg).filter { $0.code == 0xE2 }
            #expect(chunks.count == 1 && Array(chunks[0].payload.dropFirst(14)) == profile)
        }
    }

    @Test func probe_ReadsTheEXIFDate() throws {
        let app1 = TestImages.exifSegment(orientation: 1, littleEndian: false, date: "2024:05:06 07:08:09")
        let png = PNGWriter(width: 8, height: 8, colorType: .gray, exif: Array(app1.dropFirst(10))) { _, _ in [0] }
            .encode()
        #expect(try ImageProbe.probe(bytes: png).takenAt?.timeIntervalSince1970 == 1_714_979_289)
    }

    @Test func probe_ReadsTheCameraFromEXIf() throws {
        let app1 = TestImages.exifSegment(
            orientation: 1, littleEndian: true, make: Array("Apple".utf8), model: Array("iPhone 15 Pro".utf8))
        let png = PNGWriter(width: 8, height: 8, colorType: .gray, exif: Array(app1.dropFirst(10))) { _, _ in [0] }
            .encode()
        let info = try ImageProbe.probe(bytes: png)
        #expect(info.cameraMake == "Apple" && info.cameraModel == "iPhone 15 Pro")
        // A garbled eXIf chunk is ignored: the PNG itself is fine.
        let garbled = PNGWriter(width: 8, height: 8, colorType: .gray, exif: Array("MM\0*garbage".utf8)) { _, _ in [0] }
            .encode()
        let garbledInfo = try ImageProbe.probe(bytes: garbled)
        #expect(garbledInfo.cameraMake == nil && garbledInfo.width == 8)
        #expect(try ImagePipeline.process(bytes: garbled, spec: Self.spec).preview.width == 8)
    }

    @Test func probe_RefusesABombBeforeDecoding() {
        var bomb: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        bomb += PNGWriter.chunk("IHDR", PNGWriter.u32(60000) + PNGWriter.u32(60000) + [8, 2, 0, 0, 0])
        bomb += PNGWriter.chunk("IDAT", PNGWriter.deflate([UInt8](repeating: 0, count: 1000)))
        bomb += PNGWriter.chunk("IEND", [])
        #expect(throws: ImageError.tooManyPixels(width: 60000, height: 60000, limit: 100_000_000)) {
            try ImageProbe.probe(bytes: bomb)
        }
        #expect(throws: ImageError.tooManyPixels(width: 60000, height: 60000, limit: 100_000_000)) {
            try ImagePipeline.process(bytes: bomb)
        }
    }

    /// An IHDR libpng would refuse is refused by the probe (so at upload), before any decode.
    @Test func probe_RefusesACorruptIHDR() throws {
        let ihdr = PNGWriter.u32(40) + PNGWriter.u32(30)
        func png(_ fields: [UInt8], crcFlip: UInt8 = 0) -> [UInt8] {
            var chunk = PNGWriter.chunk("IHDR", ihdr + fields)
            chunk[chunk.count - 1] ^= crcFlip
            return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + chunk
                + PNGWriter.chunk("IDAT", PNGWriter.deflate([UInt8](repeating: 0, count: 31 * 30)))
                + PNGWriter.chunk("IEND", [])
        }
        #expect(try ImageProbe.probe(bytes: png([8, 0, 0, 0, 0])).width == 40)
        #expect(try ImageProbe.probe(bytes: png([1, 3, 0, 0, 1])).width == 40)
        for (fields, flip) in [
            ([8, 0, 0, 0, 0], 1), ([4, 2, 0, 0, 0], 0), ([16, 3, 0, 0, 0], 0), ([8, 5, 0, 0, 0], 0),
            ([3, 0, 0, 0, 0], 0), ([8, 2, 1, 0, 0], 0), ([8, 2, 0, 1, 0], 0), ([8, 2, 0, 0, 2], 0),
        ] as [([UInt8], UInt8)] {
            #expect(throws: ImageError.self, "\(fields), CRC flip \(flip)") {
                try ImageProbe.probe(bytes: png(fields, crcFlip: flip))
            }
        }
    }

    @Test func truncatedAndCorruptFiles_AreRefused() throws {
        let png = PNGWriter(width: 64, height: 64, colorType: .rgb) { x, y in [x * 4, y * 4, (x ^ y) & 255] }.encode()
        let cut = Array(png.prefix(png.count - 40))
        #expect(try ImageProbe.isComplete(fileAt: TestImages.temporaryFile(png, name: "a.png"), format: .png))
        #expect(try !ImageProbe.isComplete(fileAt: TestImages.temporaryFile(cut, name: "a.png"), format: .png))
        #expect(throws: ImageError.self) { try ImagePipeline.process(bytes: cut) }
        var corrupt = png
        for i in 60..<90 { corrupt[i] ^= 0x5A }
        #expect(throws: ImageError.self) { try ImagePipeline.process(bytes: corrupt) }
        #expect(throws: ImageError.self) { try ImageProbe.probe(bytes: Array(png.prefix(20))) }
    }
}
