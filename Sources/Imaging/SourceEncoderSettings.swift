/// How the derivatives of an original are encoded depending on its format: the qualities that
/// meet the byte and SSIMULACRA2 goals against vipsthumbnail differ with what the decoder hands
/// the resampler. One row per format, applied on top of `DerivativeSpec`'s qualities (so a
/// configured `quality` still moves every format).
///
/// - JPEG, HEIC and AVIF: the spec's qualities as they are
///   (docs/decisions/019-aligned-reencode-dc-step-qualities.md), the row every other goal was
///   measured with; HEIC and AVIF previews that keep the original's size stay at the downscale's
///   quality, as they were measured (047).
/// - PNG: 2 qualities lower for both outputs. A lossless source has nothing of a first encode's
///   blur in it, so our derivatives outscored vips' by 0.4–1.5 points at 0.95× its bytes; at −2
///   they are 0.85× vips' bytes over 18 photos with every thumbnail above vips', but previews that
///   keep the original's size score below it (docs/decisions/047-per-format-encoder-settings.md).
/// - WebP: the thumbnail 2 qualities lower, the preview unchanged. libwebp's rescaler hands the
///   preview the same area average vips' loader does, which leaves that preview almost no margin
///   over vips; the thumbnail, resampled from it with Lanczos-3, keeps ~2 points of margin (047).
///
/// A preview that keeps the original's size is, as on the JPEG path, its own column: the spec gives
/// it `DerivativeSpec.originalSizePreviewQualityBoost` more and each format steps from that, which
/// lifted PNG's and WebP's such previews to vips' or above on all but china (mate_Storm's is −0.01)
/// (docs/decisions/050-raster-original-size-preview-and-quality-sweep.md, with the per-photo sweep).
struct SourceEncoderSettings: Sendable, Equatable {
    /// Added to the spec's quality of a downscaled preview.
    let previewQualityStep: Int
    /// Added to the spec's quality of a preview that keeps the original's size.
    let originalSizePreviewQualityStep: Int
    /// Added to the spec's thumbnail quality.
    let thumbnailQualityStep: Int

    /// The spec's qualities unchanged.
    static let unchanged = SourceEncoderSettings(
        previewQualityStep: 0, originalSizePreviewQualityStep: 0, thumbnailQualityStep: 0)

    /// The settings for derivatives of an original in `format`.
    static func forSource(_ format: ImageFormat) -> SourceEncoderSettings {
        switch format {
        case .jpeg: .unchanged
        case .heif, .avif:
            SourceEncoderSettings(
                previewQualityStep: 0, originalSizePreviewQualityStep: -DerivativeSpec.originalSizePreviewQualityBoost,
                thumbnailQualityStep: 0)
        case .png:
            SourceEncoderSettings(previewQualityStep: -2, originalSizePreviewQualityStep: -2, thumbnailQualityStep: -2)
        case .webp:
            SourceEncoderSettings(previewQualityStep: 0, originalSizePreviewQualityStep: 0, thumbnailQualityStep: -2)
        }
    }

    /// The quality of a preview under `spec`, which `keepsOriginalSize` or is a downscale.
    func previewQuality(_ spec: DerivativeSpec, keepsOriginalSize: Bool) -> Int {
        let step = keepsOriginalSize ? originalSizePreviewQualityStep : previewQualityStep
        return min(max(spec.previewQuality(keepsOriginalSize: keepsOriginalSize) + step, 1), 100)
    }

    /// The thumbnail's quality under `spec`.
    func thumbnailQuality(_ spec: DerivativeSpec) -> Int {
        min(max(spec.effectiveThumbnailQuality + thumbnailQualityStep, 1), 100)
    }
}
