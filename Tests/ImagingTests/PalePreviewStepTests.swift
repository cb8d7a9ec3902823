import Testing

@testable import Imaging

/// A pale flat HEIC's or AVIF's preview at the original's size takes finer tables (decision 073, "Session 25
/// (g25)"): scaled by 0.95 for a mean chroma from 14 to 20, its luma's DC and two lowest AC steps held 6 above
/// under 14; a colourful, detailed, near-size or downscaled one keeps its rule's. All flat ones are then shaped
/// (decision 075, `FlatPreviewShapeTests`).
@Suite struct PalePreviewStepTests {
    @Test func heifPreviews_ScaleByChroma() {
        let pale = SourceEncoderSettings.PalePreviewStep.heifPreviews
        #expect(pale == SourceEncoderSettings.PalePreviewStep(fromChroma: 14, paleChroma: 20, scale: 0.95))
        #expect(pale.scale(meanChroma: nil) == nil)
        #expect(pale.scale(meanChroma: 20) == nil)
        #expect(pale.scale(meanChroma: 24) == nil)
        #expect(pale.scale(meanChroma: 19.99) == 0.95)
        #expect(pale.scale(meanChroma: 14) == 0.95)
        #expect(pale.scale(meanChroma: 13.99) == nil)
        #expect(pale.scale(meanChroma: 0) == nil)
    }

    /// Each step times the factor, a half rounded to even as the measurement's numpy did (5 × 0.9 = 4.5 → 4,
    /// 15 × 0.9 = 13.5 → 14, 10 × 0.95 = 9.5 → 10, 30 × 0.95 = 28.5 → 28), kept in 1…255; a gray table stays gray.
    @Test func scaledBy_RoundsHalfToEvenAndClamps() {
        var steps = [UInt32](repeating: 100, count: 64)
        (steps[0], steps[1], steps[2], steps[3]) = (5, 15, 1, 255)
        let tables = QuantizationTables(luma: steps, chroma: steps)
        let finer = tables.scaled(by: 0.9)
        #expect(Array(finer.luma[0..<4]) == [4, 14, 1, 230] && finer.luma[4] == 90 && finer.chroma == finer.luma)
        (steps[0], steps[1]) = (10, 30)
        let half = QuantizationTables(luma: steps, chroma: nil).scaled(by: 0.95)
        #expect(Array(half.luma[0..<4]) == [10, 28, 1, 242] && half.chroma == nil)
        #expect(QuantizationTables(luma: steps, chroma: nil).scaled(by: 1.1).luma[3] == 255)
    }

    /// `heifPreviews`: a flat pale preview's tables (its chroma's coarser table included) scaled from a mean
    /// chroma of 14 to 20, its luma's lowest steps held 6 above under 14 (and not scaled); a detailed one's, a
    /// colourful one's and an unmeasured one's as before. The near-size and downscaled rules have no such step.
    @Test func heifPreviewRule_ScalesOrHoldsPaleFlatOnes() {
        let rule = SourceEncoderSettings.KleinRule.heifPreviews
        let flat = SourceEncoderSettingsTests.webpOriginalSizePreview(80)
        #expect(rule.measuresChroma(gradient: 5.99) && !rule.measuresChroma(gradient: 6))
        // Then in decision 075's shape (`FlatPreviewShape`).
        let shape = SourceEncoderSettings.FlatPreviewShape.heifPreviews
        #expect(rule.tables(80, gradient: 1, meanChroma: 19.99) == shape.tables(flat.scaled(by: 0.95)))
        #expect(rule.tables(80, gradient: 1, meanChroma: 14) == shape.tables(flat.scaled(by: 0.95)))
        let held = SourceEncoderSettingsTests.lumaHeldPreview(80, held: 6)
        #expect(rule.tables(80, gradient: 1, meanChroma: 13.99) == shape.tables(held))
        #expect(rule.tables(80, gradient: 1, meanChroma: 0) == shape.tables(held))
        #expect(rule.tables(80, gradient: 1, meanChroma: 20) == shape.tables(flat))
        #expect(rule.tables(80, gradient: 1, meanChroma: nil) == shape.tables(flat))
        #expect(rule.tables(80, gradient: 6, meanChroma: 5) == QuantizationTables(kleinQuality: 82))
        // Klein 86's lowest steps are 3 where Klein 80's are 4, 5, 5: main's tables with the three at 3.
        #expect(Array(held.luma[0..<2]) == [3, 3] && held.luma[8] == 3 && Array(flat.luma[0..<2]) == [4, 5])
        #expect(flat.scaled(by: 0.95) != flat)
        for other in [
            SourceEncoderSettings.KleinRule.heifNearSizePreviews, .heifDownscaledPreviews, .avifDownscaledPreviews,
        ] {
            #expect(other.pale == nil)
        }
    }

    /// A HEIC of four levels, `tint` bluer (mean chroma about 0.58 × tint), read back (spec 60, a 48×32
    /// thumbnail: not near-size): tint 14 (chroma about 8) on Klein 60's flat tables with its luma's lowest steps
    /// at Klein 66, 29 (about 17) on them × 0.95, 40 (about 23) unchanged; and as an AVIF.
    @Test(arguments: [(14, "held"), (29, "scaled"), (40, "unchanged")])
    func palePreview_TakesItsStep(tint: Int, step: String) throws {
        let png = SourceEncoderSettingsTests.levelsPNG(tint: tint)
        let spec = DerivativeSpec(thumbnailShortEdge: 32, previewLongEdge: 128, quality: 60)
        let flat = SourceEncoderSettingsTests.webpOriginalSizePreview(60)
        let expected = SourceEncoderSettings.FlatPreviewShape.heifPreviews.tables(
            step == "held"
                ? SourceEncoderSettingsTests.lumaHeldPreview(60, held: 6)
                : step == "scaled" ? flat.scaled(by: 0.95) : flat)
        for bytes in [
            try FixtureTools.heic(png, options: ["-q", "90"]),
            try FixtureTools.heic(png, options: ["-A", "-q", "90"], avif: true),
        ] {
            let result = try ImagePipeline.process(bytes: bytes, spec: spec)
            #expect(
                result.preview.width == 96 && result.thumbnail.height == 32 && result.thumbnailSource != .samePixels)
            #expect(try SourceEncoderSettingsTests.tables(result.preview.jpeg) == expected)
        }
    }
}
