import Testing

@testable import Imaging

/// A WebP's preview at the original's size whose thumbnail is near-size, by the preview's chroma
/// (decision 064, session 20).
extension SourceEncoderSettingsTests {
    /// The quadrants in four grays (40, 100, 160, 215), each 8 bluer: PNGTests' quadrants without their
    /// colour, as a WebP (`cwebp -q 95`): a flat preview with little chroma (an exactly gray one takes the gray
    /// path, decision 069).
    static func grayQuadrantsWebP() throws -> [UInt8] {
        let levels = [40, 215, 100, 160]
        let png = PNGWriter(width: 96, height: 64, colorType: .rgb) { x, y in
            let level = levels[(y < 32 ? 0 : 2) + (x < 48 ? 0 : 1)]
            return [level, level, level + 8]
        }.encode()
        return try FixtureTools.webp(png, options: ["-q", "95"])
    }

    /// A flat WebP's preview at the original's size (96×64 under a 128 preview, quality 90: 94 in force with the
    /// near-size row) whose thumbnail is near-size (84×56) takes Klein's table 3.5 below the quality in force when
    /// the preview is colourful (the quadrants: red, green, blue, yellow) and 2.5 below, as before, when it is
    /// gray; each with the previews' coarse chroma. With a thumbnail that is not near-size (48 high) the
    /// colourful one keeps 2.5 below 92, the column's.
    @Test(arguments: [(true, 56, 94, -3.5), (false, 56, 94, -2.5), (true, 48, 92, -2.5)])
    func nearSizeWebPPreview_StepsByChroma(colourful: Bool, edge: Int, inForce: Int, step: Double) throws {
        let bytes = try colourful ? Self.quadrants(as: .webp) : Self.grayQuadrantsWebP()
        let spec = DerivativeSpec(thumbnailShortEdge: edge, previewLongEdge: 128, quality: 90)
        let result = try ImagePipeline.process(bytes: bytes, spec: spec)
        #expect(result.info.format == .webp && result.preview.width == 96 && result.thumbnail.height == edge)
        #expect(result.thumbnailSource != .samePixels)
        #expect(try Self.tables(result.preview.jpeg) == Self.webpOriginalSizePreview(Double(inForce) + step))
    }

    /// The rule: 2.5 below when flat, 3.5 below when flat with a mean chroma of at least 34, the quality in
    /// force when detailed (gradient 6), whatever the chroma; WebP's only, and only near-size.
    @Test func nearSizePreviewKlein_IsWebPs() {
        let rule = SourceEncoderSettings.KleinRule.webpNearSizePreviews
        #expect(
            rule
                == SourceEncoderSettings.KleinRule(
                    step: -2.5, detailedStep: 0, detailedGradient: 6, chroma: .webpPreviews, colourfulStep: -3.5,
                    colourfulChroma: 34))
        #expect(rule.tables(94, gradient: 2, meanChroma: 34) == Self.webpOriginalSizePreview(90.5))
        #expect(rule.tables(94, gradient: 2, meanChroma: 33.99) == Self.webpOriginalSizePreview(91.5))
        #expect(rule.tables(94, gradient: 2, meanChroma: nil) == Self.webpOriginalSizePreview(91.5))
        #expect(rule.tables(94, gradient: 6, meanChroma: 200) == Self.webpOriginalSizePreview(94))
        #expect(rule.measuresChroma(gradient: 5.99) && !rule.measuresChroma(gradient: 6))
        #expect(!SourceEncoderSettings.KleinRule.webpPreviews.measuresChroma(gradient: 0))
        let webp = SourceEncoderSettings.forSource(.webp)
        #expect(webp.nearSizePreviewKlein == rule)
        #expect(webp.originalSizePreviewKlein(nearSize: true) == rule)
        #expect(webp.originalSizePreviewKlein(nearSize: false) == .webpPreviews)
        #expect(SourceEncoderSettings.forSource(.png).originalSizePreviewKlein(nearSize: true) == .rasterPreviews)
        for format in [ImageFormat.png, .jpeg] {
            #expect(SourceEncoderSettings.forSource(format).nearSizePreviewKlein == nil)
        }
    }

    /// The mean chroma is |Cb| + |Cr| in 8-bit steps on libjpeg's weights: 0 for any gray, (8,170 + 24,320) / 256
    /// for TestImages' red (220, 30, 30), and 0 for a one-channel image.
    @Test func meanChroma_IsCbPlusCr() {
        #expect(PreviewDetail.meanChroma(TestImages.solid(width: 9, height: 7, (90, 90, 90))) == 0)
        #expect(PreviewDetail.meanChroma(TestImages.solid(width: 9, height: 7, TestImages.red)) == 126.9140625)
        #expect(PreviewDetail.meanChroma(TestImages.solid(width: 5, height: 1, TestImages.red)) == 126.9140625)
        #expect(PreviewDetail.meanChroma(TestImages.solid(width: 9, height: 7, (90, 90, 90), gray: true)) == 0)
        // Half red, half gray rows: a row in every `rowPairStep` is read, the first of each pair.
        var image = TestImages.solid(width: 8, height: 8, (90, 90, 90))
        for x in 0..<8 { for c in 0..<3 { image.bytes[x * 4 + c] = [220, 30, 30][c] } }
        #expect(PreviewDetail.meanChroma(image) == 126.9140625 / 2)
    }
}
