import CJPEG
import Dispatch
import Foundation
import Synchronization
import Testing

@testable import Imaging

@Suite struct ImagePipelineTests {
    typealias RGB = (UInt8, UInt8, UInt8)

    static func close(_ a: (r: UInt8, g: UInt8, b: UInt8), _ b: RGB, tolerance: Int = 24) -> Bool {
        abs(Int(a.r) - Int(b.0)) <= tolerance && abs(Int(a.g) - Int(b.1)) <= tolerance
            && abs(Int(a.b) - Int(b.2)) <= tolerance
    }

    /// Checks the four quadrant centres of a decoded output against the upright layout.
    static func expectUprightQuadrants(
        _ jpeg: [UInt8], width: Int, height: Int, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let image = try TestImages.decode(jpeg)
        #expect(image.width == width && image.height == height, sourceLocation: sourceLocation)
        // At the decoded image's quarters: a wrong size fails the test above, not the run.
        let (w, h) = (image.width, image.height)
        let points = [(w / 4, h / 4), (3 * w / 4, h / 4), (w / 4, 3 * h / 4), (3 * w / 4, 3 * h / 4)]
        let colors = [TestImages.red, TestImages.green, TestImages.blue, TestImages.yellow]
        for (point, color) in zip(points, colors) {
            let pixel = image.rgb(x: point.0, y: point.1)
            #expect(
                close(pixel, color), "pixel at \(point) is \(pixel), expected \(color)", sourceLocation: sourceLocation)
        }
    }

    /// The stored quadrants (TL, TR, BL, BR) that display as red, green / blue, yellow under each orientation.
    static func storedQuadrants(for orientation: Int) -> (RGB, RGB, RGB, RGB) {
        let (r, g, b, y) = (TestImages.red, TestImages.green, TestImages.blue, TestImages.yellow)
        switch orientation {
        case 2: return (g, r, y, b)
        case 3: return (y, b, g, r)
        case 4: return (b, y, r, g)
        case 5: return (r, b, g, y)
        case 6: return (g, y, r, b)
        case 7: return (y, g, b, r)
        case 8: return (b, r, y, g)
        default: return (r, g, b, y)
        }
    }

    @Test(arguments: 1...8)
    func process_OutputsUprightImages_ForEveryOrientation(orientation: Int) throws {
        // Upright the picture is 96×64: red, green / blue, yellow.
        let (tl, tr, bl, br) = Self.storedQuadrants(for: orientation)
        let swaps = orientation >= 5
        let stored = TestImages.quadrants(width: swaps ? 64 : 96, height: swaps ? 96 : 64, tl, tr, bl, br)
        let jpeg = try TestImages.inserting(
            TestImages.exifSegment(orientation: UInt16(orientation), littleEndian: orientation % 2 == 0),
            into: TestImages.baseline(stored, quality: 95))
        let result = try ImagePipeline.process(
            bytes: jpeg, spec: DerivativeSpec(thumbnailShortEdge: 32, previewLongEdge: 64, quality: 90))
        #expect(result.info.orientation == orientation)
        #expect(result.info.displayWidth == 96 && result.info.displayHeight == 64)
        #expect((result.preview.width, result.preview.height) == (64, 43))
        #expect((result.thumbnail.width, result.thumbnail.height) == (48, 32))
        try Self.expectUprightQuadrants(result.preview.jpeg, width: 64, height: 43)
        try Self.expectUprightQuadrants(result.thumbnail.jpeg, width: 48, height: 32)
    }

    @Test func process_KeepsGray_WhenInputIsGrayscale() throws {
        let jpeg = try TestImages.baseline(TestImages.solid(width: 120, height: 90, (100, 100, 100), gray: true))
        let result = try ImagePipeline.process(
            bytes: jpeg, spec: DerivativeSpec(thumbnailShortEdge: 20, previewLongEdge: 60))
        let preview = try TestImages.decode(result.preview.jpeg)
        #expect(preview.channels == 1)
        #expect(try ImageProbe.probe(bytes: result.thumbnail.jpeg).colorSpace == .grayscale)
        #expect(abs(Int(preview.rgb(x: 30, y: 20).r) - 100) <= 2)
        #expect(result.dominantColor == "#646464")
    }

    @Test(arguments: [TestImages.CMYKFlavor.plain, .adobeInverted, .adobeYCCK])
    func process_ConvertsCMYKToRGB(flavor: TestImages.CMYKFlavor) throws {
        let upright = TestImages.quadrants(
            width: 96, height: 64, TestImages.red, TestImages.green, TestImages.blue, TestImages.yellow)
        let jpeg = try TestImages.cmyk(upright, flavor: flavor)
        let result = try ImagePipeline.process(
            bytes: jpeg, spec: DerivativeSpec(thumbnailShortEdge: 32, previewLongEdge: 64, quality: 90))
        try Self.expectUprightQuadrants(result.preview.jpeg, width: 64, height: 43)
        try Self.expectUprightQuadrants(result.thumbnail.jpeg, width: 48, height: 32)
    }

    @Test func process_DecodesProgressiveInput() throws {
        let upright = TestImages.quadrants(
            width: 96, height: 64, TestImages.red, TestImages.green, TestImages.blue, TestImages.yellow)
        let jpeg = try TestImages.progressive(upright, quality: 95)
        #expect(try ImageProbe.probe(bytes: jpeg).isProgressive)
        let result = try ImagePipeline.process(
            bytes: jpeg, spec: DerivativeSpec(thumbnailShortEdge: 32, previewLongEdge: 64, quality: 90))
        try Self.expectUprightQuadrants(result.preview.jpeg, width: 64, height: 43)
    }

    @Test(arguments: [
        (1500, 1000, 256, 171, 150, 100),
        (1000, 1500, 171, 256, 100, 150),
        (1, 8000, 1, 256, 1, 8000),
        (8000, 1, 256, 1, 8000, 1),
        (4000, 60, 256, 4, 4000, 60),
        (300, 200, 256, 171, 150, 100),
        (200, 150, 200, 150, 133, 100),
        (97, 61, 97, 61, 97, 61),
        (257, 257, 256, 256, 100, 100),
        (1000, 999, 256, 256, 100, 100),
    ])
    func process_ProducesExactSizes_ForAspectRatios(
        width: Int, height: Int, previewWidth: Int, previewHeight: Int, thumbnailWidth: Int, thumbnailHeight: Int
    ) throws {
        let jpeg = try TestImages.baseline(TestImages.solid(width: width, height: height, (40, 120, 200)))
        let result = try ImagePipeline.process(
            bytes: jpeg, spec: DerivativeSpec(thumbnailShortEdge: 100, previewLongEdge: 256))
        #expect((result.preview.width, result.preview.height) == (previewWidth, previewHeight))
        #expect((result.thumbnail.width, result.thumbnail.height) == (thumbnailWidth, thumbnailHeight))
        let preview = try ImageProbe.probe(bytes: result.preview.jpeg)
        #expect((preview.width, preview.height) == (previewWidth, previewHeight))
        let thumbnail = try ImageProbe.probe(bytes: result.thumbnail.jpeg)
        #expect((thumbnail.width, thumbnail.height) == (thumbnailWidth, thumbnailHeight))
        let decoded = try TestImages.decode(result.preview.jpeg)
        #expect(Self.close(decoded.rgb(x: previewWidth / 2, y: previewHeight / 2), (40, 120, 200), tolerance: 8))
    }

    @Test func process_HandlesOneByEightThousand_WithDefaultSpec() throws {
        let jpeg = try TestImages.baseline(TestImages.solid(width: 1, height: 8000, (200, 50, 50)))
        let result = try ImagePipeline.process(bytes: jpeg)
        #expect((result.preview.width, result.preview.height) == (1, 2048))
        #expect((result.thumbnail.width, result.thumbnail.height) == (1, 8000))
        #expect(result.thumbnailSource == .decode)
    }

    /// A `width`×`height` upright picture of the four quadrants, stored turned for `orientation`
    /// (EXIF little-endian), baseline at quality 95.
    static func uprightQuadrantsJPEG(width: Int, height: Int, orientation: Int) throws -> [UInt8] {
        let (tl, tr, bl, br) = storedQuadrants(for: orientation)
        let swaps = orientation >= 5
        let stored = TestImages.quadrants(width: swaps ? height : width, height: swaps ? width : height, tl, tr, bl, br)
        return try TestImages.inserting(
            TestImages.exifSegment(orientation: UInt16(orientation), littleEndian: true),
            into: TestImages.baseline(stored, quality: 95))
    }

    @Test(arguments: [1, 3, 6])
    func process_ResamplesThumbnailFromPreviewRows_WhenPreviewIsLargeEnough(orientation: Int) throws {
        let jpeg = try Self.uprightQuadrantsJPEG(width: 1200, height: 800, orientation: orientation)
        let result = try ImagePipeline.process(
            bytes: jpeg, spec: DerivativeSpec(thumbnailShortEdge: 100, previewLongEdge: 512))
        #expect(result.thumbnailSource == .preview)
        try Self.expectUprightQuadrants(result.preview.jpeg, width: 512, height: 341)
        try Self.expectUprightQuadrants(result.thumbnail.jpeg, width: 150, height: 100)
    }

    /// An original no larger than the preview: the decoded rows go straight to the preview (the
    /// streaming encoder for 1 and 2, turned into place for 3–8), only the thumbnail is resampled.
    @Test(arguments: 1...8)
    func process_HandsDecodedRowsToThePreview_WhenItKeepsTheOriginalSize(orientation: Int) throws {
        let jpeg = try Self.uprightQuadrantsJPEG(width: 600, height: 400, orientation: orientation)
        let result = try ImagePipeline.process(
            bytes: jpeg, spec: DerivativeSpec(thumbnailShortEdge: 100, previewLongEdge: 600))
        #expect(result.timings.contains { $0.stage == "previewRows" })
        #expect((result.preview.width, result.preview.height) == (600, 400))
        try Self.expectUprightQuadrants(result.preview.jpeg, width: 600, height: 400)
        try Self.expectUprightQuadrants(result.thumbnail.jpeg, width: 150, height: 100)
    }

    /// A baseline original up to twice the preview's pixels: the decoding thread also runs the
    /// preview's horizontal pass.
    @Test(arguments: [1, 2, 3, 6])
    func process_ResamplesPreviewOnBothThreads_WhenOriginalIsSlightlyLarger(orientation: Int) throws {
        let jpeg = try Self.uprightQuadrantsJPEG(width: 750, height: 500, orientation: orientation)
        let result = try ImagePipeline.process(
            bytes: jpeg, spec: DerivativeSpec(thumbnailShortEdge: 100, previewLongEdge: 600))
        #expect(!result.timings.contains { $0.stage == "previewRows" })
        try Self.expectUprightQuadrants(result.preview.jpeg, width: 600, height: 400)
        try Self.expectUprightQuadrants(result.thumbnail.jpeg, width: 150, height: 100)
    }

    @Test func process_ReportsDisplayedSizes_WhenRotated() throws {
        let jpeg = try TestImages.inserting(
            TestImages.exifSegment(orientation: 8, littleEndian: true),
            into: TestImages.baseline(TestImages.solid(width: 300, height: 200, (10, 20, 30))))
        let result = try ImagePipeline.process(
            bytes: jpeg, spec: DerivativeSpec(thumbnailShortEdge: 100, previewLongEdge: 256))
        #expect((result.info.displayWidth, result.info.displayHeight) == (200, 300))
        #expect((result.preview.width, result.preview.height) == (171, 256))
        #expect((result.thumbnail.width, result.thumbnail.height) == (100, 150))
    }

    @Test(arguments: [false, true])
    func process_FailsCleanly_WhenFileIsTruncated(progressive: Bool) throws {
        let image = TestImages.noise(width: 256, height: 256)
        let jpeg = progressive ? try TestImages.progressive(image) : try TestImages.baseline(image)
        for cut in [jpeg.count / 2, jpeg.count - 2] {
            let path = try TestImages.temporaryFile(Array(jpeg.prefix(cut)))
            #expect(throws: ImageError.truncated) { try ImagePipeline.process(fileAt: path) }
            #expect(throws: ImageError.truncated) { try ImagePipeline.process(bytes: Array(jpeg.prefix(cut))) }
        }
    }

    /// The same through the paths where the decoding thread feeds the preview itself: straight
    /// into the streaming encoder (600×400 at a 600 preview) and with the preview's horizontal
    /// pass (750×500); a cut file must fail cleanly with the encoder half fed.
    @Test(arguments: [(600, 400), (750, 500)])
    func process_FailsCleanly_WhenTruncated_WhileDecodingThreadFeedsThePreview(width: Int, height: Int) throws {
        let jpeg = try TestImages.baseline(TestImages.noise(width: width, height: height))
        let spec = DerivativeSpec(thumbnailShortEdge: 100, previewLongEdge: 600)
        let whole = try ImagePipeline.process(bytes: jpeg, spec: spec)
        #expect(whole.timings.contains { $0.stage == "previewRows" } == (width == 600))
        for cut in [jpeg.count / 3, jpeg.count - 2] {
            #expect(throws: ImageError.truncated) {
                try ImagePipeline.process(bytes: Array(jpeg.prefix(cut)), spec: spec)
            }
        }
        var corrupt = jpeg
        corrupt[jpeg.count / 2] = 0xFF
        corrupt[jpeg.count / 2 + 1] = 0xD9
        #expect(throws: ImageError.self) { try ImagePipeline.process(bytes: corrupt, spec: spec) }
    }

    @Test func process_FailsCleanly_WhenEntropyDataIsCorrupt() throws {
        var jpeg = try TestImages.baseline(TestImages.noise(width: 256, height: 256))
        let middle = jpeg.count / 2
        jpeg[middle] = 0xFF
        jpeg[middle + 1] = 0xD9  // an EOI marker in the middle of the scan
        let error = #expect(throws: ImageError.self) { try ImagePipeline.process(bytes: jpeg) }
        guard case .corrupt = error else {
            Issue.record("expected .corrupt, got \(String(describing: error))")
            return
        }
    }

    @Test func process_RejectsFile_WithMoreScansThanTheLimit() throws {
        // The fixed script's 8 scans (the pipeline's own files choose theirs: decision 061).
        let jpeg = try JPEGEncoder.encode(
            TestImages.noise(width: 64, height: 64), quality: 90, iccProfile: nil, optimizeScans: false)
        let scans = TestImages.segments(jpeg).filter { $0.code == 0xDA }.count
        #expect(scans == JPEGEncoder.colorScans.count)
        #expect(throws: ImageError.self) {
            try ImagePipeline.process(bytes: jpeg, limits: ImageLimits(maxScans: 3))
        }
        do {
            _ = try ImagePipeline.process(bytes: jpeg, limits: ImageLimits(maxScans: 3))
        } catch let ImageError.tooManyScans(count) {
            #expect(count == 4)
        }
        _ = try ImagePipeline.process(bytes: jpeg, limits: ImageLimits(maxScans: scans))
    }

    @Test func process_WritesProgressiveOptimizedJPEG_WithoutEXIF_KeepingICC() throws {
        let profile = TestImages.iccProfile(size: 3_000)
        let source = try TestImages.baseline(TestImages.noise(width: 300, height: 200))
        var withMetadata = TestImages.inserting(
            TestImages.exifSegment(orientation: 1, littleEndian: true, date: "2020:01:02 03:04:05"), into: source)
        // An ICC APP2 chunk after the EXIF block.
        let iccPayload: [UInt8] = Array("ICC_PROFILE".utf8) + [0, 1, 1] + profile
        withMetadata = TestImages.inserting(
            [0xFF, 0xE2, UInt8((iccPayload.count + 2) >> 8), UInt8((iccPayload.count + 2) & 0xFF)] + iccPayload,
            into: withMetadata)
        let result = try ImagePipeline.process(fileAt: TestImages.temporaryFile(withMetadata))
        #expect(result.info.iccProfile == profile)
        #expect(result.info.takenAt != nil)
        for output in [result.preview.jpeg, result.thumbnail.jpeg] {
            let segments = TestImages.segments(output)
            let frames = segments.filter { (0xC0...0xCF).contains($0.code) && $0.code != 0xC4 && $0.code != 0xCC }
            #expect(frames.map(\.code) == [0xC2])
            #expect(!segments.contains { $0.code == 0xE1 })
            #expect(!segments.contains { (0xE3...0xEF).contains($0.code) || $0.code == 0xFE })
            // The scans are the fixed script's or the probes' (decision 061).
            let scans = JPEGScanChoiceTests.scanHeaders(output)
            let candidates = Set(
                JPEGScanChoice.colorProbes.reduce(JPEGEncoder.colorScans, +).map { scan in
                    JPEGScanChoiceTests.headers([scan])[0]
                })
            #expect(!scans.isEmpty && scans.allSatisfy { candidates.contains($0) })
            // Optimized Huffman tables: none is libjpeg's standard (Annex K.3) table.
            let standardCounts: [[UInt8]] = [
                [0, 1, 5, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0],
                [0, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0],
                [0, 2, 1, 3, 3, 2, 4, 3, 5, 5, 4, 4, 0, 0, 1, 0x7D],
                [0, 2, 1, 2, 4, 4, 3, 4, 7, 5, 4, 4, 0, 1, 2, 0x77],
            ]
            let tables = segments.filter { $0.code == 0xC4 }
            #expect(!tables.isEmpty)
            for table in tables {
                let counts = Array(table.payload.dropFirst().prefix(16))
                #expect(!standardCounts.contains(counts))
            }
            let info = try ImageProbe.probe(bytes: output)
            // The tables the pipeline chose: the preview keeps the original's 300×200, so its steps
            // are aligned to the original's (quality 90) at 82; the thumbnail's are ours at 82.
            let expected =
                output == result.preview.jpeg
                ? try #require(QuantizationTables(aligningTo: result.info, quality: 82))
                : QuantizationTables(quality: 82, chromaBoost: DerivativeSpec.thumbnailChromaQualityBoost)
            #expect(
                info.componentQuantization.map { $0.steps.map(UInt32.init) } == [
                    expected.luma, expected.chroma!, expected.chroma!,
                ])
            #expect(info.isProgressive)
            #expect(info.iccProfile == profile)
            #expect(info.takenAt == nil)
        }
    }

    @Test func process_DropsICCProfile_WhenItDescribesCMYK() throws {
        let image = TestImages.solid(width: 32, height: 32, TestImages.blue)
        let profile = TestImages.iccProfile(size: 500, space: "CMYK")
        let payload: [UInt8] = Array("ICC_PROFILE".utf8) + [0, 1, 1] + profile
        let jpeg = TestImages.inserting(
            [0xFF, 0xE2, UInt8((payload.count + 2) >> 8), UInt8((payload.count + 2) & 0xFF)] + payload,
            into: try TestImages.cmyk(image, flavor: .adobeInverted))
        let result = try ImagePipeline.process(bytes: jpeg)
        #expect(result.info.iccProfile == profile)
        #expect(try ImageProbe.probe(bytes: result.preview.jpeg).iccProfile == nil)
    }

    @Test func process_ReportsAverageColor() throws {
        let jpeg = try TestImages.baseline(TestImages.solid(width: 64, height: 48, (51, 102, 204)), quality: 95)
        let result = try ImagePipeline.process(bytes: jpeg)
        let hex = result.dominantColor
        #expect(hex.count == 7 && hex.hasPrefix("#"))
        let value = try #require(Int(hex.dropFirst(), radix: 16))
        #expect(
            Self.close(
                (UInt8(value >> 16), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)), (51, 102, 204), tolerance: 4))
        #expect(result.timings.map(\.stage).contains("decode"))
    }

    @Test func process_GivesIdenticalResults_WhenCalledConcurrently() throws {
        let inputs = try (0..<4).map { seed in
            try TestImages.baseline(TestImages.noise(width: 200 + seed * 30, height: 150, seed: UInt64(seed)))
        }
        let spec = DerivativeSpec(thumbnailShortEdge: 40, previewLongEdge: 120)
        let sequential = try inputs.map { try ImagePipeline.process(bytes: $0, spec: spec) }
        let results = Mutex([[UInt8]?](repeating: nil, count: 8))
        DispatchQueue.concurrentPerform(iterations: 8) { i in
            let result = try? ImagePipeline.process(bytes: inputs[i % 4], spec: spec)
            let bytes = result.map { $0.preview.jpeg + $0.thumbnail.jpeg }
            results.withLock { $0[i] = bytes }
        }
        let concurrent = results.withLock { $0 }
        for i in 0..<8 {
            #expect(concurrent[i] == sequential[i % 4].preview.jpeg + sequential[i % 4].thumbnail.jpeg)
        }
    }

    @Test func process_ReportsIOError_WhenFileIsMissing() {
        #expect(throws: ImageError.self) { try ImagePipeline.process(fileAt: "/nonexistent/galleryd/photo.jpg") }
    }

    /// The thumbnail is encoded `thumbnailQualityBoost` above the preview's quality unless set,
    /// its chroma `thumbnailChromaQualityBoost` above that; a downscaled preview at the quality.
    @Test func process_EncodesTheThumbnailHigher_UnlessSet() throws {
        let jpeg = try TestImages.baseline(TestImages.noise(width: 1000, height: 700), quality: 95)
        func steps(_ output: [UInt8]) throws -> (luma: [UInt32], chroma: [UInt32]) {
            let components = try ImageProbe.probe(bytes: output).componentQuantization
            return (components[0].steps.map(UInt32.init), components[1].steps.map(UInt32.init))
        }
        func expected(_ quality: Int, chroma: Int) -> (luma: [UInt32], chroma: [UInt32]) {
            let tables = QuantizationTables(quality: quality, chromaBoost: chroma)
            return (tables.luma, tables.chroma!)
        }
        let spec = DerivativeSpec(thumbnailShortEdge: 100, previewLongEdge: 500)
        let byDefault = try ImagePipeline.process(bytes: jpeg, spec: spec)
        #expect(try steps(byDefault.preview.jpeg) == expected(80, chroma: 3))
        #expect(try steps(byDefault.thumbnail.jpeg) == expected(82, chroma: 4))
        var set = spec
        set.quality = 70
        set.thumbnailQuality = 75
        let explicit = try ImagePipeline.process(bytes: jpeg, spec: set)
        #expect(try steps(explicit.preview.jpeg) == expected(70, chroma: 3))
        #expect(try steps(explicit.thumbnail.jpeg) == expected(75, chroma: 4))
        #expect(DerivativeSpec(quality: 99).effectiveThumbnailQuality == 100)
    }

    /// A preview that keeps the original's size is encoded `originalSizePreviewQualityBoost` higher
    /// (a 4:4:4 original: nothing to align chroma to; a quality-95 luma table: our steps win).
    @Test func process_EncodesAnOriginalSizePreviewHigher() throws {
        let original = try JPEGEncoder.encode(
            TestImages.noise(width: 320, height: 240), inputColorSpace: JCS_EXT_RGBX, jpegColorSpace: JCS_YCbCr,
            quality: 98, quantTable: nil, scans: nil, subsampleChroma: false, writeAdobe: false, iccProfile: nil)
        let result = try ImagePipeline.process(
            bytes: original, spec: DerivativeSpec(thumbnailShortEdge: 100, previewLongEdge: 320))
        let components = try ImageProbe.probe(bytes: result.preview.jpeg).componentQuantization
        let tables = try #require(QuantizationTables(aligningTo: ImageProbe.probe(bytes: original), quality: 82))
        #expect(components[0].steps.map(UInt32.init) == tables.luma)
        #expect(components[1].steps.map(UInt32.init) == QuantizationTables(quality: 82).chroma)
        #expect(DerivativeSpec().previewQuality(keepsOriginalSize: true) == 82)
        #expect(DerivativeSpec().previewQuality(keepsOriginalSize: false) == 80)
    }
}
