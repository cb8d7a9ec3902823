/// How the derivatives of an original are encoded depending on its format: the qualities that
/// meet the byte and SSIMULACRA2 goals against vipsthumbnail differ with what the decoder hands
/// the resampler. One row per format, applied on top of `DerivativeSpec`'s qualities (so a
/// configured `quality` still moves every format).
///
/// - JPEG: the spec's qualities as they are
///   (docs/decisions/019-aligned-reencode-dc-step-qualities.md), the row every other goal was
///   measured with.
/// - HEIC and AVIF: the spec's qualities, their previews that keep the original's size at the
///   downscale's quality (047), under Klein's tables since session 20 (067, at the end; AVIF's own
///   preview rules since session 21).
/// - PNG: the preview 2 qualities lower, the thumbnail 1. A lossless source has nothing of a first
///   encode's blur in it, so our derivatives outscored vips' by 0.4–1.5 points at 0.95× its bytes;
///   at −2 they are 0.85× vips' bytes over 18 photos, but previews that keep the original's size
///   score below it (docs/decisions/047-per-format-encoder-settings.md), and so did mate_Wood's
///   thumbnail (−0.15; at −1 +0.24, for 1–3% of the thumbnails' bytes: decision 056).
/// - WebP: the thumbnail 2 qualities lower, the preview unchanged. libwebp's rescaler hands the
///   preview the same area average vips' loader does, which leaves that preview almost no margin
///   over vips; the thumbnail, resampled from it with Lanczos-3, keeps ~2 points of margin (047).
///
/// A preview that keeps the original's size is, as on the JPEG path, its own column: the spec gives
/// it `DerivativeSpec.originalSizePreviewQualityBoost` more and each format steps from that, which
/// lifted PNG's and WebP's such previews to vips' or above on all but china (mate_Storm's is −0.01)
/// (docs/decisions/050-raster-original-size-preview-and-quality-sweep.md, with the per-photo sweep).
///
/// A small original's thumbnail that is nearly its preview (at least `nearSizeFraction` of the
/// preview's pixels: 640×427 → 600×400 under a 2048 preview) is hardly a downscale: it is the
/// original re-encoded, as the preview is. PNG and WebP then have their own row, `nearSize`
/// (docs/decisions/056-small-originals-thumbnail-near-preview-size.md):
///
/// | source | thumbnail | preview (keeps the original's size) |
/// |---|---|---|
/// | PNG | −6 (76) | 0 (82) |
/// | WebP | −6 (76) | +2 (84) |
///
/// (encoded qualities at the default 80 in brackets; JPEG has no such row, HEIC's and AVIF's is a Klein rule: 067). The
/// thumbnail gives up the thumbnail's boost and more, where it kept 2.6–10.9 points over vips' at
/// 0.92–1.12× its bytes; the preview gets what china's needed to reach vips' score. A flat, colourful
/// WebP's such preview goes one Klein step further (`nearSizePreviewKlein`, below). Decision 064 took
/// WebP's two further with the coarser chroma on top, fitted on china and flower alone; on 32 small
/// WebPs off the bench 9 such thumbnails then fell below vips' (mate_Blinds, Wood, RainDrops,
/// FreshFlower, fallenleaf), so a near-size WebP thumbnail is back at −6 with one table (064's validation).
///
/// A PNG or WebP preview that keeps the original's size (and is not the thumbnail too) is
/// encoded with Klein, Silverstein and Carney's table instead of ours, two qualities below the
/// one in force, or at it when the preview is detailed (`PreviewDetail`, `KleinRule`): on the
/// bench's 24 such previews that meets vips' score on all (mate_Storm's PNG one was −0.01 with
/// ours) at 0.93–1.03×, 0.97× on average, the bytes of ours
/// (docs/decisions/060-klein-tables-for-original-size-previews.md). A flat PNG's such preview goes
/// further since session 18: Klein's table 3.25 qualities below with its DC and two lowest AC steps
/// (`KleinRule.lowFrequencyStep`) still 2 below, which keeps all 14 flat ones of the bench at or above
/// vips' (fallenleaf +0.10, the thinnest) and takes dune and FreshFlower under 0.91× vips' bytes.
///
/// A WebP's preview at the original's size whose thumbnail is near-size takes its own Klein rule
/// (`nearSizePreviewKlein`, `KleinRule.webpNearSizePreviews`): as above, 2.5 below the row's quality when
/// flat and at it when detailed, but **3.5 below when flat and colourful** (a mean chroma of at least 34,
/// `PreviewDetail.meanChroma`, measured on the preview before it is encoded). Its margin over vips' is in its
/// chroma, which the coarse chroma table keeps where vips' does not: flower's went +2.40 → +1.65 and the photo
/// 0.922 → 0.908× vips' bytes; on t19b's small WebPs flower's gray copy and mate_Wood (mean chroma 0 and
/// 16.5) fell below vips' at that step, every preview from 34 up kept its score (+0.15 the thinnest)
/// (docs/decisions/064-webp-chroma-and-source-quality.md, "Session 20 (f20)").
///
/// A downscaled preview of a detailed WebP (at least 1 bit per pixel in the file: path,
/// elephants and china of `cwebp -q 80`, against at most 0.67 for the other 15 photos) takes
/// Klein's table at the column's quality: elephants' preview went from −0.10 to +0.01 against
/// vips' at 0.99× our bytes (decision 060).
///
/// A PNG's downscaled preview takes Klein's table at the column's quality whatever its file
/// (`downscaledPreviewKleinStep` 0; a PNG's bits per pixel do not sort detailed from flat): the
/// only step at which all 12 of the bench's downscaled previews, PNG and WebP, are at or above
/// vips' score (a step down, elephants' and path's WebP ones fall below); kleiber's PNG one went
/// from −0.01 to +1.06 for 5.2% more of its bytes (decision 060, "Session 18 (u28x): PNG").
///
/// A flat WebP's previews take Klein's table 2.5 qualities below the one in force, between two
/// whole qualities (`flatDownscaledPreviewKleinStep`, `KleinRule.webpPreviews`): on the bench's 8
/// such downscaled previews it is 0.94–0.995× the bytes of ours at the column's quality (fallenleaf
/// +0.08 over vips' score, the thinnest), on its 7 at the original's size 0.99× Klein's two below,
/// the thinnest margin +0.10 → +0.27 (GreenMeadow); a whole step further down (E − 3) 7 of the 8
/// downscaled ones fall below vips' (decision 060, "Fractional Klein steps"). Since session 18 (u28z)
/// the downscaled ones go 3.25 below with their DC and two lowest AC steps 2 below
/// (`flatDownscaledPreviewLowFrequencyStep`: at 77.5 the DC step was 5, at 78 it is 4): all 8 score
/// higher (fallenleaf +0.08 → +0.32, the thinnest) for 0.8–1.5% fewer bytes each.
///
/// PNG's and WebP's thumbnails take Klein's table one quality below the one in force
/// (`thumbnailKleinStep`): swept with the release tool's own thumbnails, it is 0.3–1.4% fewer bytes of
/// the photo on 34 of the bench's 36 fixtures (mate_Storm's two +0.2%, for +0.6 points) with every
/// thumbnail at or above vips' score, the thinnest margin +0.20 (china PNG; ours' was +0.10, flower
/// PNG) (decision 060).
///
/// A WebP's thumbnail and its preview at the original's size take a **coarser chroma table** than their
/// luma's (`thumbnailKleinChroma`, `KleinRule.chroma`, `KleinChroma`): a decoded lossy WebP's chroma was
/// 4:2:0 and upsampled before libjpeg averages it again, so its high frequencies carry little, and
/// SSIMULACRA2 weighs chroma less than luma. The thumbnail's chroma is Klein's table 11 qualities below
/// its luma's (14 until 064's validation: a `-q 90` RainDrops fell below vips'; near-size ones keep one
/// table), the preview's 20 below, each keeping its lowest zig-zag steps (3 and 5) at the luma's:
/// on the bench's 18 WebP photos every output stays at or above vips' score (the thinnest the previews'
/// GreenMeadow +0.08), and dune and mate_FreshFlower come under 0.91× vips' bytes; china and flower
/// (near-size thumbnails) stay over (docs/decisions/064-webp-chroma-and-source-quality.md).
///
/// PNG, WebP, HEIC and AVIF derivatives leave out an sRGB profile (`omitsSRGBProfile`): PNG writers
/// embed one by habit, and on a 640×427 photo its 3,144 bytes were 10–11% of vips' thumbnail and preview
/// each (docs/decisions/058-srgb-profile-and-preview-tables.md; flower's and path's HEICs carry one too,
/// 067). JPEG keeps its: its outputs are byte for byte what they were.
///
/// HEIC and AVIF have one row since session 20, swept with the release tool's own outputs on the bench's
/// 21 photos of each (docs/decisions/067-heic-avif-klein-rows.md): Klein's table for every derivative,
/// and WebP's coarser chroma where the photo is flat, their 4:2:0 chroma reaching libjpeg low-passed as
/// VP8's does. Every preview goes by its detail (`PreviewDetail`, measured on its pixels): at the original's
/// size at the quality in force when flat (its chroma 20 below, `KleinRule.heifPreviews`), 2 above on one
/// table when detailed (china); downscaled at the column's quality, the chroma 20 below when flat
/// (`KleinRule.heifDownscaledPreviews`: it put the detailed elephants and path below vips'). The
/// thumbnail is one below with chroma 11 below its luma (WebP's, `KleinChroma.webpThumbnails`); a near-size
/// one 2 below with the preview's chroma when flat, 1 below on one table when detailed
/// (`KleinRule.heifNearSizeThumbnails`). test_gray, whose chroma is empty, bounds the flat luma steps; a
/// small original's pale flat preview (mean chroma under 20, near-size thumbnail: `KleinRule.heifNearSizePreviews`)
/// and its near-size thumbnail hold their luma's lowest steps finer (6 and 3 above the quality in force;
/// session 21, fitted on v20's validation set); a larger original's pale flat preview holds its luma's lowest
/// steps 6 above too under a mean chroma of 14, and takes its tables × 0.95 from 14 to 20 (`PalePreviewStep`,
/// kleiber's crops, decision 073 session 25). Every flat preview at the original's size then takes the shape
/// an oracle search found on dune, Cr on a third table (`FlatPreviewShape`, decision 075), which took dune and
/// mate_FreshFlower, the last bench photos over 0.91× vips' bytes, under it.
///
/// AVIF has its own row since session 21 (067, "Session 21 (h21)"): AV1 at `heif-enc -A -q 80` leaves more
/// margin at a lower table than HEVC, so a flat downscaled AVIF preview goes 2 below the column's quality
/// (`KleinRule.avifDownscaledPreviews`); the rest is HEIC's. A flat near-size preview 1 below (flower 0.910× →
/// 0.901×) put the lead's hold-out fallenleaf 680×425 AVIF 0.06 below vips' and was left out (067, "Session 21
/// (lead)").
///
/// Since session 22 a HEIC's or AVIF's flat thumbnails are quantized by trellis, lambda's texture masking off,
/// on a finer table than libjpeg's (`flatThumbnailTrellis`, `KleinRule.flatTrellis`: `SourceEncoderSettings+Trellis`):
/// the same scores for 2–4% fewer thumbnail bytes (AVIF flower 0.910× → 0.905×). Their previews stay with libjpeg,
/// which was ahead at the same bytes on dune's and mate_FreshFlower's (decision 063, "Session 22 (t22)").
struct SourceEncoderSettings: Sendable, Equatable {
    /// Added to the spec's quality of a downscaled preview.
    let previewQualityStep: Int
    /// Added to the spec's quality of a preview that keeps the original's size.
    let originalSizePreviewQualityStep: Int
    /// Added to the spec's thumbnail quality.
    let thumbnailQualityStep: Int
    /// The steps when the thumbnail is nearly the preview's size (`isNearSize`), in place of the
    /// columns above; nil when the format has no such row.
    var nearSize: NearSizeSteps? = nil
    /// Whether the derivatives leave out an original's ICC profile that is plain sRGB
    /// (`SRGBProfile`): a JPEG without a profile is sRGB to every viewer, so the colours are the
    /// same and the profile's bytes (3,144 for the usual one) are saved on each file.
    var omitsSRGBProfile = false

    /// Klein's table for a preview that keeps the original's size, at a quality that depends on how
    /// detailed the preview is (`PreviewDetail`); nil: our tables at the column's quality.
    var originalSizePreviewKlein: KleinRule? = nil

    /// Klein's rule for a preview at the original's size whose thumbnail is near-size (`isNearSize`), in place
    /// of `originalSizePreviewKlein`; nil: that one (`originalSizePreviewKlein(nearSize:)`).
    var nearSizePreviewKlein: KleinRule? = nil

    /// Klein's table, at the column's quality, for a downscaled preview of an original of at least
    /// this many bits per pixel (the file's bytes × 8 over its pixels); nil: never. It is known
    /// before the first row, so such a preview is still encoded while it is resampled.
    var downscaledPreviewKleinBitsPerPixel: Double? = nil

    /// Klein's table for a downscaled preview by its detail, as `originalSizePreviewKlein` for one at the
    /// original's size, in place of the fields below; nil: by those. The preview's pixels are then kept
    /// and measured before it is encoded, so it is not encoded while it is resampled: for HEIC and AVIF,
    /// whose original is decoded whole first (decision 067).
    var downscaledPreviewKlein: KleinRule? = nil

    /// Klein's table for every downscaled preview, this many qualities from the column's, whatever the
    /// original's file (a PNG's bits per pixel do not tell a detailed photo from a flat one); nil: by
    /// `downscaledPreviewKleinBitsPerPixel` below. Known before the first row, as those are.
    var downscaledPreviewKleinStep: Double? = nil

    /// Klein's table for a downscaled preview of an original under `downscaledPreviewKleinBitsPerPixel`
    /// (a flat one), this many qualities from the column's, fractional (`QuantizationTables(kleinQuality:)`
    /// of a `Double`); nil: our tables at the column's quality.
    var flatDownscaledPreviewKleinStep: Double? = nil
    /// With `flatDownscaledPreviewKleinStep`, that preview's DC and two lowest AC steps
    /// (`KleinRule.heldLowFrequencies`) from Klein's table this many qualities from the column's
    /// (`QuantizationTables.holdingLowFrequencies`); nil: all from the step's table.
    var flatDownscaledPreviewLowFrequencyStep: Double? = nil

    /// Klein's table for the thumbnail, this many qualities from the thumbnail's quality in force
    /// (the column's or the near-size row's); nil: our tables with the thumbnail's chroma boost.
    var thumbnailKleinStep: Int? = nil
    /// With `thumbnailKleinStep`, the thumbnail's chroma on a coarser Klein table than its luma's; nil:
    /// the luma's table.
    var thumbnailKleinChroma: KleinChroma? = nil

    /// Klein's table for a near-size thumbnail (`isNearSize`), in place of `thumbnailKleinStep`'s: its
    /// `step` (or `detailedStep` when the preview, at the original's size, is detailed) from the
    /// thumbnail's quality in force, one table for luma and chroma; nil: `thumbnailKleinStep`'s. The
    /// preview's detail is measured before either file is encoded (`PreviewDetail`), so it costs nothing.
    var nearSizeThumbnailKlein: KleinRule? = nil

    /// Trellis for a thumbnail that is not near-size, of a preview whose Klein rule finds it flat (at the
    /// original's size or downscaled), on Klein's table `FlatTrellis.step` from the thumbnail's quality in
    /// force in place of `thumbnailKleinStep`, its chroma by `thumbnailKleinChroma`
    /// (`thumbnailTables(quality:trellis:)`); nil: libjpeg (decision 063, session 22).
    var flatThumbnailTrellis: FlatTrellis? = nil

    /// A gray original's near-size thumbnail (`isNearSize`, the preview at the original's size): its step from
    /// the spec's thumbnail quality in place of `GrayDerivatives.thumbnailStep`; nil: that one. WebP's is 0, one
    /// below: vips makes such a thumbnail with libwebp's rescaler while decoding, which loses 7–12 points of
    /// SSIMULACRA2 more than vips' own resampler of the same pixels (`VipsResamplingLoss` does not model it).
    /// On 80 gray near-size WebPs the thinnest margin is then +0.75 (decision 072, "Session 26 (w26)").
    var grayNearSizeThumbnailStep: Int? = nil

    /// The share of the preview's pixels from which a thumbnail counts as nearly its size.
    static let nearSizeFraction = 0.75

    /// The spec's qualities unchanged.
    static let unchanged = SourceEncoderSettings(
        previewQualityStep: 0, originalSizePreviewQualityStep: 0, thumbnailQualityStep: 0)

    /// Whether a thumbnail of `thumbnail` pixels is nearly a preview of `preview` pixels: it has
    /// at least `nearSizeFraction` of them, and is not the preview itself.
    static func isNearSize(thumbnail: (width: Int, height: Int), preview: (width: Int, height: Int)) -> Bool {
        let (thumbnailPixels, previewPixels) = (thumbnail.width * thumbnail.height, preview.width * preview.height)
        return thumbnailPixels < previewPixels && Double(thumbnailPixels) >= nearSizeFraction * Double(previewPixels)
    }

    /// The settings for derivatives of an original in `format`.
    static func forSource(_ format: ImageFormat) -> SourceEncoderSettings {
        switch format {
        case .jpeg: .unchanged
        case .heif:
            SourceEncoderSettings(
                previewQualityStep: 0, originalSizePreviewQualityStep: -DerivativeSpec.originalSizePreviewQualityBoost,
                thumbnailQualityStep: 0, omitsSRGBProfile: true, originalSizePreviewKlein: .heifPreviews,
                nearSizePreviewKlein: .heifNearSizePreviews, downscaledPreviewKlein: .heifDownscaledPreviews,
                thumbnailKleinStep: -1,
                thumbnailKleinChroma: .webpThumbnails, nearSizeThumbnailKlein: .heifNearSizeThumbnails,
                flatThumbnailTrellis: .heifThumbnails)
        case .avif:
            SourceEncoderSettings(
                previewQualityStep: 0, originalSizePreviewQualityStep: -DerivativeSpec.originalSizePreviewQualityBoost,
                thumbnailQualityStep: 0, omitsSRGBProfile: true, originalSizePreviewKlein: .heifPreviews,
                nearSizePreviewKlein: .heifNearSizePreviews, downscaledPreviewKlein: .avifDownscaledPreviews,
                thumbnailKleinStep: -1, thumbnailKleinChroma: .webpThumbnails,
                nearSizeThumbnailKlein: .heifNearSizeThumbnails, flatThumbnailTrellis: .heifThumbnails)
        case .png:
            SourceEncoderSettings(
                previewQualityStep: -2, originalSizePreviewQualityStep: -2, thumbnailQualityStep: -1,
                nearSize: NearSizeSteps(previewQualityStep: 0, thumbnailQualityStep: -6), omitsSRGBProfile: true,
                originalSizePreviewKlein: .rasterPreviews, downscaledPreviewKleinStep: 0, thumbnailKleinStep: -1)
        case .webp:
            SourceEncoderSettings(
                previewQualityStep: 0, originalSizePreviewQualityStep: 0, thumbnailQualityStep: -2,
                nearSize: NearSizeSteps(previewQualityStep: 2, thumbnailQualityStep: -6), omitsSRGBProfile: true,
                originalSizePreviewKlein: .webpPreviews, nearSizePreviewKlein: .webpNearSizePreviews,
                downscaledPreviewKleinBitsPerPixel: 1,
                flatDownscaledPreviewKleinStep: -3.25, flatDownscaledPreviewLowFrequencyStep: -2,
                thumbnailKleinStep: -1,
                thumbnailKleinChroma: .webpThumbnails, nearSizeThumbnailKlein: .webpNearSizeThumbnails,
                grayNearSizeThumbnailStep: 0)
        }
    }

    /// The quality of a preview under `spec`, which `keepsOriginalSize` or is a downscale, and whose
    /// thumbnail is `nearSize` or not (`isNearSize`).
    func previewQuality(_ spec: DerivativeSpec, keepsOriginalSize: Bool, nearSize near: Bool = false) -> Int {
        let ownStep = keepsOriginalSize ? originalSizePreviewQualityStep : previewQualityStep
        let step = (near ? nearSize?.previewQualityStep : nil) ?? ownStep
        return min(max(spec.previewQuality(keepsOriginalSize: keepsOriginalSize) + step, 1), 100)
    }

    /// The Klein rule of a preview at the original's size whose thumbnail is `nearSize` or not.
    func originalSizePreviewKlein(nearSize near: Bool) -> KleinRule? {
        (near ? nearSizePreviewKlein : nil) ?? originalSizePreviewKlein
    }

    /// The tables of a downscaled preview at `quality` (`previewQuality`'s) of an original whose file
    /// has `bitsPerPixel` (nil: unknown): Klein's table `downscaledPreviewKleinStep` from it whatever
    /// the file; else Klein's table at it from `downscaledPreviewKleinBitsPerPixel`,
    /// `flatDownscaledPreviewKleinStep` from it under that, else ours.
    func downscaledPreviewTables(quality: Int, bitsPerPixel: Double?) -> QuantizationTables {
        if let step = downscaledPreviewKleinStep { return Self.klein(quality, step: step) }
        guard let minimum = downscaledPreviewKleinBitsPerPixel, let bitsPerPixel else {
            return QuantizationTables(quality: quality)
        }
        if bitsPerPixel >= minimum { return QuantizationTables(kleinQuality: quality) }
        guard let step = flatDownscaledPreviewKleinStep else { return QuantizationTables(quality: quality) }
        return Self.klein(quality, step: step, holdingLowFrequenciesAt: flatDownscaledPreviewLowFrequencyStep)
    }

    /// Klein's table `step` qualities from `inForce` (clamped to 1…100, fractional), with its DC and
    /// two lowest AC steps (`KleinRule.heldLowFrequencies`) from Klein's table `lowFrequencyStep` from
    /// `inForce` when one is given (`QuantizationTables.holdingLowFrequencies`).
    static func klein(_ inForce: Int, step: Double, holdingLowFrequenciesAt lowFrequencyStep: Double? = nil)
        -> QuantizationTables
    {
        let tables = QuantizationTables(kleinQuality: min(max(Double(inForce) + step, 1), 100))
        guard let lowFrequencyStep else { return tables }
        let finer = QuantizationTables(kleinQuality: min(max(Double(inForce) + lowFrequencyStep, 1), 100))
        return tables.holdingLowFrequencies(KleinRule.heldLowFrequencies, of: finer)
    }

    /// The thumbnail's tables at `quality` (`thumbnailQuality`'s): Klein's table
    /// `thumbnailKleinStep` from it (its chroma by `thumbnailKleinChroma` when there is one and the
    /// thumbnail is not `nearSize`: decision 064's validation), or ours when the format has no such step.
    func thumbnailTables(quality: Int, nearSize near: Bool = false) -> QuantizationTables {
        if let step = thumbnailKleinStep {
            let lumaQuality = min(max(quality + step, 1), 100)
            let tables = QuantizationTables(kleinQuality: lumaQuality)
            guard !near, let chroma = thumbnailKleinChroma else { return tables }
            return chroma.tables(tables, lumaQuality: Double(lumaQuality))
        }
        return QuantizationTables(quality: quality, chromaBoost: DerivativeSpec.thumbnailChromaQualityBoost)
    }

    /// The thumbnail's quality under `spec`, when it is `nearSize` to the preview's or not.
    func thumbnailQuality(_ spec: DerivativeSpec, nearSize near: Bool = false) -> Int {
        let step = (near ? nearSize?.thumbnailQualityStep : nil) ?? thumbnailQualityStep
        return min(max(spec.effectiveThumbnailQuality + step, 1), 100)
    }
}
