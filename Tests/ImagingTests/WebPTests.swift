import CWebP
import Testing

@testable import Imaging

@Suite struct WebPTests {
    static let spec = PNGTests.spec

    static func solidPNG(_ rgba: [Int], width: Int = 40, height: Int = 30) -> [UInt8] {
        PNGWriter(width: width, height: height, colorType: .rgba) { _, _ in rgba }.encode()
    }

    @Test func process_DecodesLossy() throws {
        let webp = try FixtureTools.webp(PNGTests.quadrantsPNG(), options: ["-q", "95"])
        let result = try ImagePipeline.process(bytes: webp, spec: Self.spec)
        #expect(result.info.format == .webp && result.info.format.contentType == "image/webp")
        #expect((result.info.width, result.info.height) == (96, 64))
        try ImagePipelineTests.expectUprightQuadrants(result.preview.jpeg, width: 64, height: 43)
        try ImagePipelineTests.expectUprightQuadrants(result.thumbnail.jpeg, width: 48, height: 32)
    }

    @Test func process_DecodesLosslessWithAlpha() throws {
        let lossless = try FixtureTools.webp(Self.solidPNG([200, 100, 50, 255]), options: ["-lossless"])
        #expect(try ImagePipeline.process(bytes: lossless, spec: Self.spec).dominantColor == "#c86432")
        // Half-transparent red over white; fully transparent is white whatever colour hides under it.
        let half = try FixtureTools.webp(Self.solidPNG([255, 0, 0, 128]), options: ["-lossless", "-exact"])
        #expect(try ImagePipeline.process(bytes: half, spec: Self.spec).dominantColor == "#ff7f7f")
        let clear = try FixtureTools.webp(Self.solidPNG([0, 0, 255, 0]), options: ["-lossless", "-exact"])
        #expect(try ImagePipeline.process(bytes: clear, spec: Self.spec).dominantColor == "#ffffff")
        // Lossy with an alpha plane.
        let lossy = try FixtureTools.webp(Self.solidPNG([255, 0, 0, 128]), options: ["-q", "95", "-alpha_q", "100"])
        let color = try PNGTests.meanColor(ImagePipeline.process(bytes: lossy, spec: Self.spec).preview.jpeg)
        #expect(ImagePipelineTests.close(color, (255, 127, 127), tolerance: 8), "\(color)")
    }

    @Test func process_UsesTheFirstFrameOfAnAnimation() throws {
        let animation = try FixtureTools.run(
            "img2webp", ["-lossless", "-d", "100", "{0}", "{1}", "-o", "{out}"],
            inputs: [("a.png", Self.solidPNG([220, 30, 30, 255])), ("b.png", Self.solidPNG([30, 40, 210, 255]))],
            output: "out.webp")
        let info = try ImageProbe.probe(bytes: animation)
        #expect((info.width, info.height, info.format) == (40, 30, .webp))
        #expect(try ImagePipeline.process(bytes: animation, spec: Self.spec).dominantColor == "#dc1e1e")
    }

    @Test func probe_ReadsTheCameraFromTheEXIFChunk() throws {
        let webp = try FixtureTools.webp(PNGTests.quadrantsPNG(), options: ["-q", "90"])
        let app1 = TestImages.exifSegment(
            orientation: 1, littleEndian: false, date: "2024:05:06 07:08:09", make: Array("Google".utf8),
            model: Array("Pixel 8".utf8))
        // The chunk holds the TIFF structure (no `Exif\0\0`), as webpmux and the container spec write it.
        let tagged = try FixtureTools.run(
            "webpmux", ["-set", "exif", "{1}", "{0}", "-o", "{out}"],
            inputs: [("in.webp", webp), ("in.exif", Array(app1.dropFirst(10)))], output: "out.webp")
        let info = try ImageProbe.probe(bytes: tagged)
        #expect(info.cameraMake == "Google" && info.cameraModel == "Pixel 8")
        #expect(info.takenAt?.timeIntervalSince1970 == 1_714_979_289)
        #expect(try ImagePipeline.process(bytes: tagged, spec: Self.spec).info.cameraModel == "Pixel 8")
        #expect(try ImageProbe.probe(bytes: webp).cameraMake == nil)
    }

    @Test func probe_RefusesABombBeforeDecoding() {
        // A lossless header declaring 16384×16384 (VP8L: 14-bit sizes minus one, then alpha and version bits).
        let packed = UInt32(16383) | UInt32(16383) << 14
        var chunk: [UInt8] = Array("VP8L".utf8) + [13, 0, 0, 0, 0x2F]
        chunk += [UInt8(packed & 0xFF), UInt8(packed >> 8 & 0xFF), UInt8(packed >> 16 & 0xFF), UInt8(packed >> 24)]
        chunk += [UInt8](repeating: 0, count: 9)
        let riff = Array("RIFF".utf8) + [UInt8(chunk.count + 4), 0, 0, 0] + Array("WEBP".utf8) + chunk
        #expect(throws: ImageError.tooManyPixels(width: 16384, height: 16384, limit: 100_000_000)) {
            try ImageProbe.probe(bytes: riff)
        }
    }

    @Test func truncatedFiles_AreRefused() throws {
        let webp = try FixtureTools.webp(
            PNGWriter(width: 64, height: 64, colorType: .rgb) { x, y in [x * 4, y * 4, (x ^ y) & 255] }.encode(),
            options: ["-q", "90"])
        let cut = Array(webp.prefix(webp.count / 2))
        #expect(try ImageProbe.isComplete(fileAt: TestImages.temporaryFile(webp, name: "a.webp"), format: .webp))
        #expect(try !ImageProbe.isComplete(fileAt: TestImages.temporaryFile(cut, name: "a.webp"), format: .webp))
        #expect(throws: ImageError.self) { try ImagePipeline.process(bytes: cut) }
    }

    /// A `width`×`height` RGBA PNG of hashed noise (incompressible, so the WebP spans many chunks),
    /// with alpha varying when `alpha`.
    static func noisePNG(width: Int, height: Int, alpha: Bool = false) -> [UInt8] {
        PNGWriter(width: width, height: height, colorType: .rgba) { x, y in
            let h = (x &* 73_856_093) ^ (y &* 19_349_663)
            return [h & 255, (h >> 8) & 255, (h >> 16) & 255, alpha ? (x + y) & 255 : 255]
        }.encode()
    }

    /// Every row `rows` hands out, in order, and how many runs they came in.
    static func collect(_ rows: any RasterRows) throws -> (pixels: [UInt8], runs: Int) {
        var pixels: [UInt8] = []
        var runs = 0
        try rows.forEachRun { first, stride, count in
            runs += 1
            for r in 0..<count {
                pixels += UnsafeBufferPointer(start: first + r * stride, count: rows.width * rows.layout.bytesPerPixel)
            }
        }
        return (pixels, runs)
    }

    /// libwebp's one-shot decode of the whole image, the reference for the incremental one.
    static func wholeDecode(_ webp: [UInt8], alpha: Bool) -> [UInt8] {
        var width: Int32 = 0
        var height: Int32 = 0
        let decoded = webp.withUnsafeBufferPointer { input in
            alpha
                ? WebPDecodeRGBA(input.baseAddress, input.count, &width, &height)
                : WebPDecodeRGB(input.baseAddress, input.count, &width, &height)
        }
        guard let decoded else { return [] }
        defer { WebPFree(decoded) }
        return Array(UnsafeBufferPointer(start: decoded, count: Int(width * height) * (alpha ? 4 : 3)))
    }

    @Test(arguments: [(["-q", "90"], false), (["-q", "90", "-alpha_q", "100"], true), (["-lossless"], true)])
    func rows_ComeInSeveralRuns_ByteIdenticalToAWholeDecode(options: [String], alpha: Bool) throws {
        let webp = try FixtureTools.webp(Self.noisePNG(width: 320, height: 240, alpha: alpha), options: options)
        // A target the image's own size: decoded at full size.
        let rows = try WebPDecoder.rows(bytes: webp, limits: ImageLimits(), covering: [(320, 240)])
        #expect((rows.width, rows.height, rows.layout) == (320, 240, alpha ? .rgba : .rgb))
        let (pixels, runs) = try Self.collect(rows)
        #expect(runs > 1, "the resampler starts before the decode ends")
        #expect(pixels == Self.wholeDecode(webp, alpha: alpha))
    }

    @Test func rows_ShrinkWhileDecoding_ToThePreview() throws {
        let colors = [TestImages.red, TestImages.green, TestImages.blue, TestImages.yellow]
        let png = PNGWriter(width: 960, height: 640, colorType: .rgb) { x, y in
            let c = colors[(y < 320 ? 0 : 2) + (x < 480 ? 0 : 1)]
            return [Int(c.0), Int(c.1), Int(c.2)]
        }.encode()
        let webp = try FixtureTools.webp(png, options: ["-q", "95"])
        // A 64×43 preview: 960×640 shrinks to 65×43 (the other side rounded up to keep the ratio).
        let rows = try WebPDecoder.rows(bytes: webp, limits: ImageLimits(), covering: [(64, 43)])
        #expect((rows.width, rows.height) == (65, 43))
        #expect(try Self.collect(rows).pixels.count == 65 * 43 * 3)
        let result = try ImagePipeline.process(bytes: webp, spec: Self.spec)
        #expect((result.info.width, result.info.height) == (960, 640))
        try ImagePipelineTests.expectUprightQuadrants(result.preview.jpeg, width: 64, height: 43)
        try ImagePipelineTests.expectUprightQuadrants(result.thumbnail.jpeg, width: 48, height: 32)
    }

    /// A preview at the decode's size (an opaque WebP shrunk to it while decoding, an opaque PNG at
    /// its own size) takes the decoded rows straight, as RGBX bytes, with no resampling pass
    /// (decision 065): the same files as the resampling path, which the same image with an alpha
    /// channel (every pixel opaque) still takes.
    @Test func previewAtTheDecodeSize_GivesTheResamplingPathsBytes() throws {
        func image(alpha: Bool) -> [UInt8] {
            PNGWriter(width: 240, height: 160, colorType: alpha ? .rgba : .rgb) { x, y in
                let h = (x &* 73_856_093) ^ (y &* 19_349_663)
                let rgb = [(x + (h & 31)) & 255, (y + ((h >> 5) & 31)) & 255, (x + y + ((h >> 10) & 31)) & 255]
                return alpha ? rgb + [255] : rgb
            }.encode()
        }
        #expect(RasterRowConverter(layout: .rgb).isByteCopy)
        #expect(!RasterRowConverter(layout: .rgba).isByteCopy)
        #expect(!RasterRowConverter(layout: .rgb, nclxPrimaries: 12).isByteCopy)
        // At its own size (preview 240×160), the thumbnail from the preview (48×32), from the
        // decoded rows (150×100: more than half the preview) and the preview itself.
        for spec in [
            DerivativeSpec(thumbnailShortEdge: 32, previewLongEdge: 240, quality: 90),
            DerivativeSpec(thumbnailShortEdge: 100, previewLongEdge: 240, quality: 90),
            DerivativeSpec(thumbnailShortEdge: 160, previewLongEdge: 240, quality: 90),
        ] {
            let direct = try ImagePipeline.process(bytes: image(alpha: false), spec: spec)
            let resampled = try ImagePipeline.process(bytes: image(alpha: true), spec: spec)
            #expect(direct.preview.jpeg == resampled.preview.jpeg)
            #expect(direct.thumbnail.jpeg == resampled.thumbnail.jpeg)
            #expect(direct.dominantColor == resampled.dominantColor)
        }
        // A lossy WebP shrunk to its 120×80 preview while decoding, whose preview streams into its encoder.
        let spec = DerivativeSpec(thumbnailShortEdge: 32, previewLongEdge: 120, quality: 90)
        let lossy = try FixtureTools.webp(image(alpha: false), options: ["-q", "90"])
        let rows = try WebPDecoder.rows(bytes: lossy, limits: ImageLimits(), covering: [(120, 80)])
        #expect((rows.width, rows.height, rows.layout) == (120, 80, .rgb))
        let result = try ImagePipeline.process(bytes: lossy, spec: spec)
        #expect((result.preview.width, result.preview.height, result.thumbnail.height) == (120, 80, 32))
    }

    @Test func rows_ThrowTruncated_AfterHandingOutTheRowsThatCame() throws {
        let webp = try FixtureTools.webp(Self.noisePNG(width: 320, height: 240), options: ["-q", "90"])
        let cut = Array(webp.prefix(webp.count * 3 / 4))
        var handedOut = 0
        #expect(throws: ImageError.truncated) {
            try WebPDecoder.rows(bytes: cut, limits: ImageLimits(), covering: [(64, 48)]).forEachRun { _, _, count in
                handedOut += count
            }
        }
        #expect(handedOut > 0 && handedOut < 240)
    }
}
