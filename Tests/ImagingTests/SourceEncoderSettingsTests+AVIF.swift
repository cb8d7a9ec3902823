import Testing

@testable import Imaging

/// AVIF's own preview rule (decision 067, session 21): its flat downscaled previews 2 below the column's
/// quality, where HEIC's stay at it; everything else HEIC's row (a flat near-size preview 1 below failed the
/// lead's hold-out set). Read back from the outputs' DQT segments.
extension SourceEncoderSettingsTests {
    /// AVIF's row is HEIC's but for the downscaled preview's rule.
    @Test func avifRow_HasItsOwnPreviewRules() {
        let (avif, heif) = (SourceEncoderSettings.forSource(.avif), SourceEncoderSettings.forSource(.heif))
        #expect(avif != heif)
        #expect(avif.nearSizePreviewKlein == .heifNearSizePreviews)
        #expect(avif.downscaledPreviewKlein == .avifDownscaledPreviews)
        #expect(heif.downscaledPreviewKlein == .heifDownscaledPreviews)
        var shared = avif
        shared.downscaledPreviewKlein = .heifDownscaledPreviews
        #expect(shared == heif)
        #expect(avif.originalSizePreviewKlein(nearSize: false) == .heifPreviews)
        #expect(avif.originalSizePreviewKlein(nearSize: true) == .heifNearSizePreviews)
    }

    /// The AVIF rule's tables: a flat downscaled preview Klein 2 below with the coarser chroma, a detailed one
    /// at the column's quality on one table.
    @Test func avifRules_StepBelowHEICsWhenFlat() {
        let downscaled = SourceEncoderSettings.KleinRule.avifDownscaledPreviews
        #expect(downscaled.tables(80, gradient: 5.99) == Self.webpOriginalSizePreview(78))
        #expect(downscaled.tables(80, gradient: 6) == QuantizationTables(kleinQuality: 80))
        #expect(!downscaled.measuresChroma(gradient: 1))
    }

    /// An AVIF's downscaled preview (64×43 of the flat quadrants' 96×64, spec 90): Klein 88 with the coarser
    /// chroma, where a HEIC's is Klein 90 (`heicDownscaledPreview_TakesKleinsTable`).
    @Test func avifDownscaledPreview_TakesKleinTwoBelow() throws {
        let avif = try FixtureTools.heic(PNGTests.quadrantsPNG(), options: ["-q", "90"], avif: true)
        let result = try ImagePipeline.process(bytes: avif, spec: Self.spec)
        #expect(result.info.format == .avif && result.preview.width == 64)
        try Self.expectTables(
            result, preview: 90, thumbnail: 92, previewTables: Self.webpOriginalSizePreview(88), trellisThumbnail: true)
    }
}
