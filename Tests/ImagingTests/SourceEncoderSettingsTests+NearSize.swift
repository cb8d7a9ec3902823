import Testing

@testable import Imaging

/// A WebP's near-size thumbnail by the preview's detail (decision 063, session 19).
extension SourceEncoderSettingsTests {
    /// A WebP's near-size thumbnail (84×56 of a 96×64 preview) takes Klein's table 6 qualities below its
    /// quality in force (86 at spec 90) when the preview is detailed (mean luma gradient ≥ 6, measured on
    /// the preview before either file is encoded), one below when flat, read back from its DQT; a PNG's
    /// keeps the one step below either way, and so does a detailed WebP thumbnail that is not near-size
    /// (48 high: 90, so 89). vips' WebP thumbnails come from libwebp's rescaler (decision 063, session 19).
    @Test(arguments: [
        (ImageFormat.webp, false, 56, 85.0), (.webp, true, 56, 80), (.png, false, 56, 85), (.png, true, 56, 85),
    ])
    func nearSizeWebPThumbnail_StepsByDetail(format: ImageFormat, detailed: Bool, edge: Int, klein: Double) throws {
        let bytes = try detailed ? Self.detailed(as: format) : Self.quadrants(as: format)
        let spec = DerivativeSpec(thumbnailShortEdge: edge, previewLongEdge: 128, quality: 90)
        let result = try ImagePipeline.process(bytes: bytes, spec: spec)
        #expect(result.info.format == format && result.preview.width == 96 && result.thumbnail.height == edge)
        #expect(result.thumbnailSource != .samePixels)
        #expect(try Self.tables(result.thumbnail.jpeg) == QuantizationTables(kleinQuality: klein))
    }

    /// A detailed WebP's thumbnail that is not near-size (48 high of a 96×64 preview) keeps the step
    /// every WebP thumbnail takes: Klein one below 90, its chroma coarser (decision 064).
    @Test func detailedWebPThumbnail_NotNearSize_KeepsTheUsualStep() throws {
        let spec = DerivativeSpec(thumbnailShortEdge: 48, previewLongEdge: 128, quality: 90)
        let result = try ImagePipeline.process(bytes: try Self.detailed(as: .webp), spec: spec)
        #expect(result.thumbnail.height == 48 && result.thumbnailSource != .samePixels)
        let settings = SourceEncoderSettings.forSource(.webp)
        #expect(try Self.tables(result.thumbnail.jpeg) == settings.thumbnailTables(quality: 90))
        #expect(try Self.tables(result.thumbnail.jpeg) != QuantizationTables(kleinQuality: 84))
    }

    /// The rule's steps: 1 below when flat (as elsewhere), 6 from a gradient of 6, for WebP (HEIC's and
    /// AVIF's own: SourceEncoderSettingsTests+HEIF).
    @Test func nearSizeThumbnailKlein_IsWebPs() {
        let rule = SourceEncoderSettings.KleinRule.webpNearSizeThumbnails
        #expect(rule == SourceEncoderSettings.KleinRule(step: -1, detailedStep: -6, detailedGradient: 6))
        #expect(rule.tables(86, gradient: 5.99) == QuantizationTables(kleinQuality: 85))
        #expect(rule.tables(86, gradient: 6) == QuantizationTables(kleinQuality: 80))
        #expect(rule.tables(4, gradient: 14) == QuantizationTables(kleinQuality: 1))
        #expect(SourceEncoderSettings.forSource(.webp).nearSizeThumbnailKlein == rule)
        for format in [ImageFormat.png, .jpeg] {
            #expect(SourceEncoderSettings.forSource(format).nearSizeThumbnailKlein == nil)
        }
    }
}
