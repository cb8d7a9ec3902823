/// Trellis quantization in the rows (decision 063; HEIC and AVIF since its session 22 section): which
/// derivatives the coefficient path quantizes by rate and distortion (`JPEGQuantizer.trellis`), with which
/// lambda, on which Klein step. Only when the spec's quantizer is the default `libjpeg`: a configured one is
/// used for every output, on the libjpeg steps.
extension SourceEncoderSettings {
    /// Trellis' lambda and Klein's step for a flat derivative: the step is in place of the rule's own
    /// (trellis zeroes coefficients libjpeg rounds up, so it takes a finer table for the same score), the
    /// rest of the rule (its chroma, its held low frequencies) as it is; and the chroma sharpening its
    /// encode takes (`JPEGEncoder.encode`'s `chromaSharpening`, 0: none).
    struct FlatTrellis: Sendable, Equatable {
        let lambda: JPEGQuantizer.TrellisLambda
        let step: Double
        var chromaSharpening: Float = 0

        /// HEIC's and AVIF's thumbnails of a flat preview (not near-size): Klein's table half a quality above
        /// the thumbnail's quality in force, 1.5 above libjpeg's (`thumbnailKleinStep` −1), the chroma 11 below
        /// the luma's as libjpeg's (decision 063, "Session 22 (t22)"). Their chroma is not sharpened: at 0.75
        /// on a step one coarser they scored up to +1.3 at equal bytes on the bench's (HEIC mate_FreshFlower
        /// 0.912× → 0.910×), but v20's mate_Wood sources fell 0.06 below vips' (decision 071).
        static let heifThumbnails = FlatTrellis(lambda: .flat, step: 0.5)
        /// HEIC's and AVIF's flat near-size thumbnails: Klein's table at the quality in force, 2 above libjpeg's
        /// (`KleinRule.heifNearSizeThumbnails`' step −2), with its chroma and pale hold. 1 and 0.5 below put v20's
        /// near-size fallenleaf 720×405 HEIC thumbnail 0.54 and 0.11 below vips' (+0.04 at this step, libjpeg's
        /// +0.13: chosen looking at that validation set; decision 063, "Session 22 (t22)").
        static let heifNearSizeThumbnails = FlatTrellis(lambda: .flat, step: 0)
    }

    /// The thumbnail's tables at `quality` when `trellis` quantizes it: Klein's table `trellis.step` from
    /// `quality`, fractional, its chroma by `thumbnailKleinChroma` as `thumbnailTables(quality:)`'s.
    func thumbnailTables(quality: Int, trellis: FlatTrellis) -> QuantizationTables {
        let lumaQuality = min(max(Double(quality) + trellis.step, 1), 100)
        let tables = QuantizationTables(kleinQuality: lumaQuality)
        return thumbnailKleinChroma.map { $0.tables(tables, lumaQuality: lumaQuality) } ?? tables
    }
}

extension SourceEncoderSettings.KleinRule {
    /// The trellis rule for a preview of this `gradient` (nil: libjpeg): `flatTrellis` when the preview is
    /// flat (under `detailedGradient`).
    func trellis(gradient: Double) -> SourceEncoderSettings.FlatTrellis? {
        gradient < detailedGradient ? flatTrellis : nil
    }

    /// The tables of a flat preview that `trellis` quantizes: `tables(_:gradient:meanChroma:)` with the
    /// trellis step in place of `step` (and of `colourfulStep`).
    func tables(_ inForce: Int, gradient: Double, meanChroma: Double?, trellis: SourceEncoderSettings.FlatTrellis)
        -> QuantizationTables
    {
        var rule = self
        rule.step = trellis.step
        rule.colourfulStep = nil
        rule.flatTrellis = nil
        return rule.tables(inForce, gradient: gradient, meanChroma: meanChroma)
    }
}
