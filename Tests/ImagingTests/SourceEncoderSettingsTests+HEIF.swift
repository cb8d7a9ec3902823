import Testing

@testable import Imaging

/// HEIC's and AVIF's own row (decision 067): Klein's tables for every derivative, the coarser chroma
/// of WebP's where the photo is flat, read back from the outputs' DQT segments.
extension SourceEncoderSettingsTests {
    /// HEIC's row (AVIF's differs in two preview rules: `avifRow_HasItsOwnPreviewRules`): an sRGB profile
    /// left out, the original-size preview by `heifPreviews`, a downscaled one by `heifDownscaledPreviews` (both
    /// by the preview's detail), the thumbnail one below with WebP's thumbnail chroma, a near-size one by
    /// `heifNearSizeThumbnails`; the spec's qualities as before.
    @Test func heifRow_TakesKleinsTables() {
        let heif = SourceEncoderSettings.forSource(.heif)
        #expect(heif.omitsSRGBProfile)
        #expect(heif.originalSizePreviewKlein == .heifPreviews)
        #expect(heif.downscaledPreviewKlein == .heifDownscaledPreviews)
        #expect(heif.downscaledPreviewKleinStep == nil && heif.downscaledPreviewKleinBitsPerPixel == nil)
        #expect(heif.flatDownscaledPreviewKleinStep == nil)
        for format in [ImageFormat.jpeg, .png, .webp] {
            #expect(SourceEncoderSettings.forSource(format).downscaledPreviewKlein == nil)
        }
        #expect(heif.thumbnailKleinStep == -1 && heif.thumbnailKleinChroma == .webpThumbnails)
        #expect(heif.nearSizeThumbnailKlein == .heifNearSizeThumbnails)
        #expect(heif.nearSizePreviewKlein == .heifNearSizePreviews)
        #expect(heif.nearSize == nil)
        #expect(heif.previewQuality(Self.spec, keepsOriginalSize: true) == 90)
        #expect(heif.previewQuality(Self.spec, keepsOriginalSize: false) == 90)
        #expect(heif.thumbnailQuality(Self.spec) == 92)
        #expect(heif.thumbnailTables(quality: 80) == Self.thumbnailTables(.heif, quality: 80))
    }

    /// The rules' steps: a flat preview at the quality in force with chroma 20 below (five steps held), a
    /// detailed one 2 above on one table; a flat near-size thumbnail 2 below with the preview's chroma, a
    /// detailed one 1 below on one table. Without `chromaOnlyWhenFlat` the detailed ones
    /// would take the coarser chroma too.
    @Test func heifRules_ChromaOnlyWhenFlat() {
        let preview = SourceEncoderSettings.KleinRule.heifPreviews
        #expect(
            preview
                == SourceEncoderSettings.KleinRule(
                    step: 0, detailedStep: 2, detailedGradient: 6,
                    chroma: SourceEncoderSettings.KleinChroma(step: -20, heldLowFrequencies: 5),
                    chromaOnlyWhenFlat: true, lowChromaLumaStep: 6, lowChroma: 14, pale: .heifPreviews,
                    shape: .heifPreviews
                ))
        // A flat one in decision 075's shape (`FlatPreviewShapeTests`).
        let shape = SourceEncoderSettings.FlatPreviewShape.heifPreviews
        #expect(preview.tables(80, gradient: 5.99) == shape.tables(Self.webpOriginalSizePreview(80)))
        #expect(preview.tables(80, gradient: 5.99, meanChroma: 20) == shape.tables(Self.webpOriginalSizePreview(80)))
        #expect(preview.tables(80, gradient: 6) == QuantizationTables(kleinQuality: 82))
        #expect(preview.tables(99, gradient: 14) == QuantizationTables(kleinQuality: 100))
        let downscaled = SourceEncoderSettings.KleinRule.heifDownscaledPreviews
        #expect(downscaled.step == 0 && downscaled.detailedStep == 0 && downscaled.chroma == preview.chroma)
        #expect(downscaled.chromaOnlyWhenFlat && downscaled.detailedGradient == 6)
        #expect(downscaled.tables(80, gradient: 5.99) == Self.webpOriginalSizePreview(80))
        #expect(downscaled.tables(80, gradient: 6) == QuantizationTables(kleinQuality: 80))
        let thumbnail = SourceEncoderSettings.KleinRule.heifNearSizeThumbnails
        #expect(thumbnail.step == -2 && thumbnail.detailedStep == -1 && thumbnail.chroma == .webpPreviews)
        #expect(thumbnail.chromaOnlyWhenFlat)
        #expect(thumbnail.tables(92, gradient: 5.99) == Self.webpOriginalSizePreview(90))
        #expect(thumbnail.tables(92, gradient: 6) == QuantizationTables(kleinQuality: 91))
        var everywhere = thumbnail
        everywhere.chromaOnlyWhenFlat = false
        #expect(everywhere.tables(92, gradient: 6) != QuantizationTables(kleinQuality: 91))
        #expect(SourceEncoderSettings.KleinRule.webpPreviews.chromaOnlyWhenFlat == false)
    }

    /// A HEIC's derivatives, read back (spec 90): the flat quadrants' preview at the original's size
    /// (96×64) on Klein's table at 90 with the coarser chroma, the detailed checkerboard's on Klein 92;
    /// the thumbnail (48×32, not near-size) on Klein 91 with chroma 11 below it when detailed, trellis-quantized
    /// on Klein 92.5 with that chroma when flat (decision 063, session 22).
    @Test(arguments: [false, true])
    func heicPreviewAtOriginalSize_TakesKleinsTable(detailed: Bool) throws {
        let bytes = try detailed ? Self.detailed(as: .heif) : Self.quadrants(as: .heif)
        let spec = DerivativeSpec(thumbnailShortEdge: 32, previewLongEdge: 128, quality: 90)
        let result = try ImagePipeline.process(bytes: bytes, spec: spec)
        #expect(result.info.format == .heif && result.preview.width == 96 && result.thumbnail.height == 32)
        #expect(result.thumbnailSource != .samePixels)
        let preview =
            detailed
            ? QuantizationTables(kleinQuality: 92)
            : SourceEncoderSettings.FlatPreviewShape.heifPreviews.tables(Self.webpOriginalSizePreview(90))
        #expect(try Self.tables(result.preview.jpeg) == preview)
        #expect(try Self.tables(result.preview.jpeg) != QuantizationTables(quality: 90))
        #expect(try Self.tables(result.thumbnail.jpeg) == Self.thumbnailTables(.heif, quality: 92, trellis: !detailed))
    }

    /// A small original's pale flat preview (near-size thumbnail, mean chroma under 20) holds its luma's DC and
    /// two lowest AC steps 6 above the quality in force, its chroma as a colourful one's; a larger original's
    /// under a mean chroma of 14 since session 25 (2 above under 2 before); a detailed one is not measured for chroma. The downscaled rule has no
    /// such hold (session 21: v20's test_gray 600×427 HEIC preview was −0.37 below vips' with session 20's hold
    /// at E + 2, mate_Wood 800×450's −0.18 without).
    @Test func heifPalePreview_HoldsItsLumasLowestStepsHigher() {
        let near = SourceEncoderSettings.KleinRule.heifNearSizePreviews
        #expect(near.measuresChroma(gradient: 5.99) && !near.measuresChroma(gradient: 6))
        let pale = Self.lumaHeldPreview(80, held: 6)
        #expect(pale.chroma == Self.webpOriginalSizePreview(80).chroma)
        // Flat ones in decision 075's shape (`FlatPreviewShapeTests`).
        let shape = SourceEncoderSettings.FlatPreviewShape.heifPreviews
        #expect(near.tables(80, gradient: 1, meanChroma: 0) == shape.tables(pale))
        #expect(near.tables(80, gradient: 1, meanChroma: 19.99) == shape.tables(pale))
        #expect(near.tables(80, gradient: 1, meanChroma: 20) == shape.tables(Self.webpOriginalSizePreview(80)))
        #expect(near.tables(80, gradient: 1, meanChroma: nil) == shape.tables(Self.webpOriginalSizePreview(80)))
        #expect(near.tables(80, gradient: 6) == QuantizationTables(kleinQuality: 82))
        let preview = SourceEncoderSettings.KleinRule.heifPreviews
        // Since session 25 the larger original's hold is 6 above too, under a mean chroma of 14; from 14 to 20 its
        // tables are scaled by 0.95 instead (`PalePreviewStepTests`).
        #expect(preview.tables(80, gradient: 1, meanChroma: 0) == shape.tables(Self.lumaHeldPreview(80, held: 6)))
        #expect(preview.tables(80, gradient: 1, meanChroma: 13.99) == shape.tables(Self.lumaHeldPreview(80, held: 6)))
        #expect(
            preview.tables(80, gradient: 1, meanChroma: 14)
                == shape.tables(Self.webpOriginalSizePreview(80).scaled(by: 0.95)))
        #expect(preview.tables(80, gradient: 1, meanChroma: 20) == shape.tables(Self.webpOriginalSizePreview(80)))
        for rule in [SourceEncoderSettings.KleinRule.heifDownscaledPreviews, .webpPreviews] {
            #expect(rule.lowChromaLumaStep == nil)
        }
    }

    /// Klein's table `step` from `quality` with a WebP preview's chroma, and its luma's DC and two lowest AC
    /// steps from Klein's table `held` from it (the low-chroma hold).
    static func lumaHeldPreview(_ quality: Int, step: Double = 0, held: Double) -> QuantizationTables {
        let tables = webpOriginalSizePreview(Double(quality) + step)
        var luma = tables.luma
        let finer = QuantizationTables(kleinQuality: Double(quality) + held)
        for k in [0, 1, 8] { luma[k] = finer.luma[k] }
        let result = QuantizationTables(luma: luma, chroma: tables.chroma)
        #expect(result != tables)
        return result
    }

    /// Four levels of gray, each `tint` bluer (RGB PNG, 96×64).
    static func levelsPNG(tint: Int) -> [UInt8] {
        let levels = [40, 90, 160, 215]
        return PNGWriter(width: 96, height: 64, colorType: .rgb) { x, y in
            let level = levels[(y < 32 ? 0 : 2) + (x < 48 ? 0 : 1)]
            return [level, level, level + tint]
        }.encode()
    }

    /// A pale HEIC's preview at the original's size, read back (spec 60, where Klein 60's and 66's lowest steps
    /// differ): with a near-size thumbnail (84×56) the pale quadrants' (14 bluer, mean chroma under 20) luma's
    /// lowest steps are held at Klein 66, the colour quadrants' not; with a smaller thumbnail (48×32) too since
    /// session 25 (mean chroma under 14, decision 073 g25). Gray
    /// quadrants (tint 0) take the gray path since decision 069.
    @Test(arguments: [0, 14])
    func heicPalePreview_TakesTheHeldTable(tint: Int) throws {
        let heic = try FixtureTools.heic(Self.levelsPNG(tint: tint), options: ["-q", "90"])
        let near = DerivativeSpec(thumbnailShortEdge: 56, previewLongEdge: 128, quality: 60)
        let result = try ImagePipeline.process(bytes: heic, spec: near)
        #expect(result.info.format == .heif && result.preview.width == 96 && result.thumbnail.height == 56)
        if tint == 0 {
            // Gray: one component on its own steps (decision 069), whatever the thumbnail.
            let gray = GrayDerivatives.previewTables(near, keepsOriginalSize: true, gradient: 0)
            #expect(try GrayDerivativesTests.luma(result.preview.jpeg, components: 1) == gray.luma)
            return
        }
        // Flat ones in decision 075's shape (`FlatPreviewShapeTests`).
        let shape = SourceEncoderSettings.FlatPreviewShape.heifPreviews
        #expect(try Self.tables(result.preview.jpeg) == shape.tables(Self.lumaHeldPreview(60, held: 6)))
        let colour = try ImagePipeline.process(bytes: try Self.quadrants(as: .heif), spec: near)
        #expect(try Self.tables(colour.preview.jpeg) == shape.tables(Self.webpOriginalSizePreview(60)))
        let spec = DerivativeSpec(thumbnailShortEdge: 32, previewLongEdge: 128, quality: 60)
        let larger = try ImagePipeline.process(bytes: heic, spec: spec)
        #expect(larger.preview.width == 96 && larger.thumbnail.height == 32)
        // Not near-size, and under a mean chroma of 14 (about 8): the same hold since session 25 (decision 073, g25).
        #expect(try Self.tables(larger.preview.jpeg) == shape.tables(Self.lumaHeldPreview(60, held: 6)))
    }

    /// A HEIC's downscaled preview (64×43 of the flat quadrants' 96×64) takes Klein's table at the column's
    /// quality (90) with chroma 20 below it, measured on its pixels, not ours streamed; its thumbnail, flat,
    /// trellis-quantized on Klein 92.5 with the coarser chroma.
    @Test func heicDownscaledPreview_TakesKleinsTable() throws {
        let result = try ImagePipeline.process(bytes: Self.quadrants(as: .heif), spec: Self.spec)
        #expect(result.info.format == .heif && result.preview.width == 64)
        try Self.expectTables(
            result, preview: 90, thumbnail: 92, previewTables: Self.webpOriginalSizePreview(90), trellisThumbnail: true)
    }

    /// A HEIC's near-size thumbnail (84×56 of a 96×64 preview) at the thumbnail's quality in force (92):
    /// Klein 92 with chroma 20 below it when the preview is flat (trellis-quantized; libjpeg's would be Klein 90,
    /// decision 063, session 22), Klein 91 on one table when detailed.
    @Test(arguments: [false, true])
    func heicNearSizeThumbnail_StepsByDetail(detailed: Bool) throws {
        let bytes = try detailed ? Self.detailed(as: .heif) : Self.quadrants(as: .heif)
        let spec = DerivativeSpec(thumbnailShortEdge: 56, previewLongEdge: 128, quality: 90)
        let result = try ImagePipeline.process(bytes: bytes, spec: spec)
        #expect(result.info.format == .heif && result.preview.width == 96 && result.thumbnail.height == 56)
        let thumbnail =
            detailed
            ? QuantizationTables(kleinQuality: 91)
            : Self.thumbnailTables(.heif, quality: 92, nearSize: true, trellis: true)
        #expect(try Self.tables(result.thumbnail.jpeg) == thumbnail)
    }

    /// A pale HEIC's near-size thumbnail (84×56 of a 96×64 preview, thumbnail quality in force 92; a gray one
    /// takes the gray path, decision 069): Klein 90 with the preview's chroma, its luma's DC and two lowest AC steps held at Klein 95 (3
    /// above); a colourful one's are Klein 90's (`heicNearSizeThumbnail_StepsByDetail`). Session 21: v20's
    /// test_gray 600×427 HEIC thumbnail was −0.47 below vips' without the hold, +0.25 with it.
    @Test(arguments: [0, 14])
    func heicPaleNearSizeThumbnail_HoldsItsLumasLowestSteps(tint: Int) throws {
        let heic = try FixtureTools.heic(Self.levelsPNG(tint: tint), options: ["-q", "90"])
        let spec = DerivativeSpec(thumbnailShortEdge: 56, previewLongEdge: 128, quality: 90)
        let result = try ImagePipeline.process(bytes: heic, spec: spec)
        #expect(result.info.format == .heif && result.preview.width == 96 && result.thumbnail.height == 56)
        if tint == 0 {
            let gray = GrayDerivatives.thumbnailTables(spec)
            #expect(try GrayDerivativesTests.luma(result.thumbnail.jpeg, components: 1) == gray.luma)
            return
        }
        // Trellis-quantized at Klein 92, the hold as libjpeg's Klein 90 has it (decision 063, session 22).
        #expect(try Self.tables(result.thumbnail.jpeg) == Self.lumaHeldPreview(92, step: 0, held: 3))
        #expect(
            SourceEncoderSettings.KleinRule.heifNearSizeThumbnails.tables(92, gradient: 1, meanChroma: 20)
                == Self.thumbnailTables(.heif, quality: 92, nearSize: true))
    }
}
