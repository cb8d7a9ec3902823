import Testing

@testable import Imaging

/// AVIF's own preview rules (decision 067, session 21): its flat downscaled previews 2 below the column's
/// quality and its flat previews whose thumbnail is near-size 1 below, where HEIC's stay at it; everything
/// else HEIC's row. Read back from the outputs' DQT segments.
extension SourceEncoderSettingsTests {
    /// `checkerboard` (96×64) as a PNG, to be encoded as an AVIF.
    static func checkerboardPNG() -> [UInt8] {
        let image = checkerboard(width: 96, height: 64)
        return PNGWriter(width: 96, height: 64, colorType: .rgb) { x, y in
            let rgb = image.rgb(x: x, y: y)
            return [Int(rgb.r), Int(rgb.g), Int(rgb.b)]
        }.encode()
    }

    /// AVIF's row is HEIC's but for the near-size preview's and the downscaled preview's rules.
    @Test func avifRow_HasItsOwnPreviewRules() {
        let (avif, heif) = (SourceEncoderSettings.forSource(.avif), SourceEncoderSettings.forSource(.heif))
        #expect(avif != heif)
        #expect(avif.nearSizePreviewKlein == .avifNearSizePreviews)
        #expect(heif.nearSizePreviewKlein == .heifNearSizePreviews)
        #expect(avif.downscaledPreviewKlein == .avifDownscaledPreviews)
        #expect(heif.downscaledPreviewKlein == .heifDownscaledPreviews)
        var shared = avif
        shared.nearSizePreviewKlein = .heifNearSizePreviews
        shared.downscaledPreviewKlein = .heifDownscaledPreviews
        #expect(shared == heif)
        #expect(avif.originalSizePreviewKlein(nearSize: false) == .heifPreviews)
        #expect(avif.originalSizePreviewKlein(nearSize: true) == .avifNearSizePreviews)
    }

    /// The AVIF rules' tables: a flat downscaled preview Klein 2 below with the coarser chroma, a detailed one
    /// at the column's quality on one table; a flat near-size preview 1 below, a detailed one 2 above, a pale
    /// one with its luma's lowest steps held 6 above the quality in force.
    @Test func avifRules_StepBelowHEICsWhenFlat() {
        let downscaled = SourceEncoderSettings.KleinRule.avifDownscaledPreviews
        #expect(downscaled.tables(80, gradient: 5.99) == Self.webpOriginalSizePreview(78))
        #expect(downscaled.tables(80, gradient: 6) == QuantizationTables(kleinQuality: 80))
        #expect(!downscaled.measuresChroma(gradient: 1))
        let near = SourceEncoderSettings.KleinRule.avifNearSizePreviews
        #expect(near.tables(80, gradient: 5.99, meanChroma: 44) == Self.webpOriginalSizePreview(79))
        #expect(near.tables(80, gradient: 6) == QuantizationTables(kleinQuality: 82))
        #expect(near.tables(80, gradient: 1, meanChroma: 0) == Self.lumaHeldPreview(80, step: -1, held: 6))
    }

    /// An AVIF's downscaled preview (64×43 of the flat quadrants' 96×64, spec 90): Klein 88 with the coarser
    /// chroma, where a HEIC's is Klein 90 (`heicDownscaledPreview_TakesKleinsTable`).
    @Test func avifDownscaledPreview_TakesKleinTwoBelow() throws {
        let avif = try FixtureTools.heic(PNGTests.quadrantsPNG(), options: ["-q", "90"], avif: true)
        let result = try ImagePipeline.process(bytes: avif, spec: Self.spec)
        #expect(result.info.format == .avif && result.preview.width == 64)
        try Self.expectTables(result, preview: 90, thumbnail: 92, previewTables: Self.webpOriginalSizePreview(88))
    }

    /// An AVIF's preview at the original's size whose thumbnail is near-size (96×64, thumbnail 84×56, spec
    /// 90): Klein 89 with the coarser chroma when flat, Klein 92 on one table when detailed; a HEIC's flat one
    /// Klein 90.
    @Test(arguments: [false, true])
    func avifNearSizePreview_StepsBelowWhenFlat(detailed: Bool) throws {
        let png = detailed ? Self.checkerboardPNG() : PNGTests.quadrantsPNG()
        let avif = try FixtureTools.heic(png, options: ["-q", "90"], avif: true)
        let spec = DerivativeSpec(thumbnailShortEdge: 56, previewLongEdge: 128, quality: 90)
        let result = try ImagePipeline.process(bytes: avif, spec: spec)
        #expect(result.info.format == .avif && result.preview.width == 96 && result.thumbnail.height == 56)
        let preview = detailed ? QuantizationTables(kleinQuality: 92) : Self.webpOriginalSizePreview(89)
        #expect(try Self.tables(result.preview.jpeg) == preview)
        if !detailed {
            let heic = try ImagePipeline.process(bytes: Self.quadrants(as: .heif), spec: spec)
            #expect(try Self.tables(heic.preview.jpeg) == Self.webpOriginalSizePreview(90))
        }
    }
}
