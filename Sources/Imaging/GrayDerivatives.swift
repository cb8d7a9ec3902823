/// The derivatives of a gray original that is not a JPEG: a grey PNG, a monochrome HEIC or AVIF, a black and
/// white photo saved in colour (`PixelBuffer.isAchromatic`). They are one-component JPEGs, as a gray JPEG's
/// are, on Klein's table from the spec's qualities (the JPEG row's, not the format's: decision 069).
///
/// The formats' rows (`SourceEncoderSettings`) were swept on colour photos, where part of a derivative's
/// margin over vips' score is in its chroma, which those rows quantize coarsely. A gray photo has none, so on
/// 24 gray sources (gray copies of 11 photos at the bench's sizes and others, as HEIC, AVIF, PNG and WebP)
/// main's derivatives scored below vips' in 30 of 48 files, by up to 2.07 points. Dropping the empty chroma
/// alone saves 2–3% of the bytes at the same scores; these steps put every file at or above vips' score
/// (decision 069's tables).
enum GrayDerivatives {
    /// A preview at the original's size: Klein's table one quality above the spec's, one and a half when
    /// detailed (gray china's was −0.08 at one; gray elephants' 1920×1080 0.933× vips' bytes at two).
    static let originalSizePreviews = SourceEncoderSettings.KleinRule(step: 1, detailedStep: 1.5, detailedGradient: 6)
    /// A downscaled preview: three above the spec's (a downscale keeps more detail per pixel; gray elephants'
    /// 4000×2250 AVIF was −0.98 at one).
    static let downscaledPreviews = SourceEncoderSettings.KleinRule(step: 3, detailedStep: 3, detailedGradient: 6)
    /// The thumbnail, near-size or not: one above the spec's (a near-size one a step lower fell below vips' on
    /// gray dune's 680×425 HEIC and AVIF); a WebP's near-size one at the spec's
    /// (`SourceEncoderSettings.grayNearSizeThumbnailStep`, decision 072, session 26).
    static let thumbnailStep = 1

    /// The preview's tables under `spec`, by whether it `keepsOriginalSize` and its mean luma `gradient`
    /// (`PreviewDetail.meanGradient`).
    static func previewTables(_ spec: DerivativeSpec, keepsOriginalSize: Bool, gradient: Double) -> QuantizationTables {
        let rule = keepsOriginalSize ? originalSizePreviews : downscaledPreviews
        let tables = rule.tables(spec.previewQuality(keepsOriginalSize: keepsOriginalSize), gradient: gradient)
        return QuantizationTables(luma: tables.luma, chroma: nil)
    }

    /// The thumbnail's tables under `spec`, `step` qualities from the spec's thumbnail quality (a WebP's
    /// near-size one: `SourceEncoderSettings.grayNearSizeThumbnailStep`).
    static func thumbnailTables(_ spec: DerivativeSpec, step: Int = thumbnailStep) -> QuantizationTables {
        QuantizationTables(kleinQuality: min(max(spec.effectiveThumbnailQuality + step, 1), 100), gray: true)
    }
}
