import Testing

@testable import Imaging

/// vips' resampling loss (decision 072): the estimate, and the detailed near-size HEIC/AVIF thumbnail's step
/// lowered by it, read back from the outputs' DQT segments.
@Suite struct VipsResamplingLossTests {
    /// A gray horizontal ramp, 0 at the left to 255 at the right: no fine detail anywhere.
    static func ramp(width: Int, height: Int) -> PixelBuffer {
        var image = PixelBuffer(width: width, height: height, channels: 4)
        for y in 0..<height {
            for x in 0..<width {
                let v = UInt8(x * 255 / (width - 1))
                image.bytes.replaceSubrange((y * width + x) * 4..<(y * width + x) * 4 + 3, with: [v, v, v])
            }
        }
        return image
    }

    /// `SourceEncoderSettingsTests.checkerboard` as a PNG of `width`×`height`.
    static func checkerboardPNG(width: Int, height: Int) -> [UInt8] {
        let image = SourceEncoderSettingsTests.checkerboard(width: width, height: height)
        return PNGWriter(width: width, height: height, colorType: .rgb) { x, y in
            let rgb = image.rgb(x: x, y: y)
            return [Int(rgb.r), Int(rgb.g), Int(rgb.b)]
        }.encode()
    }

    /// 87×64 → 82×60: vips shrinks by 64/60 and centres its samples up to e/2 = 0.23 source pixels from ours at
    /// the ends (e = 82·64/60 − 87), so a one-pixel checkerboard's estimate is large (19.2 luma steps) and a
    /// ramp's small (0.39: only the shift of a slope of 3 a pixel); at 96×64 → 90×60 both grids are the same
    /// (e = 0, estimate 0), and a portrait 64×87 → 60×82 is measured down its columns as the landscape one across.
    @Test func estimate_LargeForFineDetailWhereTheGridsDrift() throws {
        let detailed = SourceEncoderSettingsTests.checkerboard(width: 87, height: 64)
        let fine = try #require(VipsResamplingLoss.rmsDifference(detailed, thumbnail: (82, 60)))
        #expect(fine > 10)
        let smooth = try #require(
            VipsResamplingLoss.rmsDifference(Self.ramp(width: 87, height: 64), thumbnail: (82, 60)))
        #expect(smooth < 0.5)
        let aligned = SourceEncoderSettingsTests.checkerboard(width: 96, height: 64)
        let same = try #require(VipsResamplingLoss.rmsDifference(aligned, thumbnail: (90, 60)))
        #expect(same < 0.001)
        let portrait = SourceEncoderSettingsTests.checkerboard(width: 64, height: 87)
        let turned = try #require(VipsResamplingLoss.rmsDifference(portrait, thumbnail: (60, 82)))
        #expect(abs(turned - fine) < 0.5)
    }

    /// No estimate where vips' thumbnail would have another size (87×64 at 60 high is 82 wide, not 81), where
    /// it would box-shrink first (a shrink of 4 or more) or where nothing is reduced.
    @Test func estimate_NilWhereVipsWouldNotMakeThatThumbnail() {
        let image = SourceEncoderSettingsTests.checkerboard(width: 87, height: 64)
        #expect(VipsResamplingLoss.rmsDifference(image, thumbnail: (81, 60)) == nil)
        #expect(VipsResamplingLoss.rmsDifference(image, thumbnail: (22, 16)) == nil)
        #expect(VipsResamplingLoss.rmsDifference(image, thumbnail: (87, 64)) == nil)
        #expect(VipsResamplingLoss.rmsDifference(image, thumbnail: (90, 60)) == nil)
    }

    /// HEIC's and AVIF's rule: none up to an estimate of 0.7, then one Klein step a luma step, at most 3; no
    /// estimate, no step. WebP's, PNG's and JPEG's rows have none (their outputs are main's).
    @Test func rule_StepsByTheEstimate_HEIFRowsOnly() {
        let rule = SourceEncoderSettings.ResamplingLossStep.heifNearSizeThumbnails
        #expect(rule.steps(rms: nil) == 0 && rule.steps(rms: 0.5) == 0 && rule.steps(rms: 0.7) == 0)
        #expect(abs(rule.steps(rms: 1.7) - 1) < 1e-9 && rule.steps(rms: 3.7) == 3 && rule.steps(rms: 40) == 3)
        for format in [ImageFormat.heif, .avif] {
            #expect(SourceEncoderSettings.forSource(format).nearSizeThumbnailKlein?.resamplingLoss == rule)
            // The step's one-table Klein is the row's own detailed tables only when its chroma is for flat ones.
            #expect(SourceEncoderSettings.forSource(format).nearSizeThumbnailKlein?.chromaOnlyWhenFlat == true)
        }
        #expect(SourceEncoderSettings.forSource(.webp).nearSizeThumbnailKlein?.resamplingLoss == nil)
        for format in [ImageFormat.png, .jpeg] {
            #expect(SourceEncoderSettings.forSource(format).nearSizeThumbnailKlein == nil)
        }
    }

    /// A detailed HEIC's and AVIF's near-size thumbnail (spec 90: quality in force 92, the row's Klein 91) at
    /// 87×64 → 82×60, where the checkerboard's estimate is far over 3.7: Klein 88, 3 below the row's; at
    /// 96×64 → 84×56 (e = 0: the estimate 0) the row's 91 (`heicNearSizeThumbnail_StepsByDetail`). A WebP's at
    /// 87×64 keeps WebP's own detailed step (Klein 80, decision 063).
    @Test(arguments: [ImageFormat.heif, .avif, .webp])
    func detailedNearSizeThumbnail_StepsBelowByTheEstimate(format: ImageFormat) throws {
        let png = Self.checkerboardPNG(width: 87, height: 64)
        let bytes =
            format == .webp
            ? try FixtureTools.webp(png, options: ["-q", "95"])
            : try FixtureTools.heic(png, options: ["-q", "90"], avif: format == .avif)
        let spec = DerivativeSpec(thumbnailShortEdge: 60, previewLongEdge: 128, quality: 90)
        let result = try ImagePipeline.process(bytes: bytes, spec: spec)
        #expect(result.preview.width == 87 && result.thumbnail.width == 82 && result.thumbnail.height == 60)
        let klein: Double = format == .webp ? 80 : 88
        #expect(try SourceEncoderSettingsTests.tables(result.thumbnail.jpeg) == QuantizationTables(kleinQuality: klein))
        if format != .webp {
            let aligned = try ImagePipeline.process(
                bytes: try FixtureTools.heic(Self.checkerboardPNG(width: 96, height: 64), options: ["-q", "90"]),
                spec: DerivativeSpec(thumbnailShortEdge: 56, previewLongEdge: 128, quality: 90))
            #expect(aligned.thumbnail.width == 84)
            #expect(
                try SourceEncoderSettingsTests.tables(aligned.thumbnail.jpeg) == QuantizationTables(kleinQuality: 91))
        }
    }
}
