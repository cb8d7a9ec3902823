/// The rules `SourceEncoderSettings`' rows are made of: Klein's table by the preview's detail
/// (`KleinRule`), a coarser chroma table (`KleinChroma`) and a near-size row's steps (`NearSizeSteps`),
/// with each format's instances (docs/decisions/060, 064, 067).
extension SourceEncoderSettings {
    /// A chroma table coarser than the luma's Klein table: Klein's table `step` qualities from the luma's
    /// (clamped to 1…100, fractional), with its first `heldLowFrequencies` steps in zig-zag order kept at
    /// the luma's (`QuantizationTables.coarseningChroma`; decision 064).
    struct KleinChroma: Sendable, Equatable {
        let step: Double
        let heldLowFrequencies: Int

        /// WebP's downscaled thumbnails: 11 below the luma's (12 below the quality in force), the DC and
        /// the two lowest AC steps the luma's (14 below failed a `-q 90` RainDrops off the bench: 064).
        static let webpThumbnails = KleinChroma(step: -11, heldLowFrequencies: 3)
        /// WebP's previews at the original's size: 20 below the luma's, its five lowest steps the luma's.
        static let webpPreviews = KleinChroma(step: -20, heldLowFrequencies: 5)

        /// `tables` (Klein's, at `lumaQuality`) with this chroma.
        func tables(_ tables: QuantizationTables, lumaQuality: Double) -> QuantizationTables {
            let coarser = QuantizationTables(kleinQuality: min(max(lumaQuality + step, 1), 100))
            return tables.coarseningChroma(to: coarser, keeping: heldLowFrequencies)
        }
    }

    /// Klein, Silverstein and Carney's table (`QuantizationTables(kleinQuality:)`) at the preview's
    /// quality in force (the column's, or the near-size row's) plus a step: `step`, or
    /// `detailedStep` when the preview's mean luma gradient is at least `detailedGradient`. With
    /// `lowFrequencyStep`, a preview that is not detailed keeps its DC and two lowest AC steps
    /// (`heldLowFrequencies` in zig-zag order, luma and chroma) at the quality in force plus that step.
    struct KleinRule: Sendable, Equatable {
        var step: Double
        let detailedStep: Double
        let detailedGradient: Double
        var lowFrequencyStep: Double? = nil
        /// The preview's chroma on a coarser table than its luma's (decision 064); nil: the luma's.
        var chroma: KleinChroma? = nil
        /// Whether `chroma` is for a flat preview only, a detailed one keeping the luma's table for its
        /// chroma (HEIC and AVIF: a detailed photo's colour edges need it; decision 067).
        var chromaOnlyWhenFlat = false
        /// The step of a flat preview whose mean chroma (`PreviewDetail.meanChroma`) is at least
        /// `colourfulChroma`, in place of `step`; nil: `step` whatever the chroma.
        var colourfulStep: Double? = nil
        /// The mean chroma from which a flat preview takes `colourfulStep`.
        var colourfulChroma = 0.0
        /// For a flat preview whose mean chroma is under `lowChroma` (a gray or nearly gray photo, which has
        /// little chroma whose bytes a coarser table saves), its **luma's** DC and two lowest AC steps at the
        /// quality in force plus this step (its chroma's as the rest of the rule makes them); nil: none.
        var lowChromaLumaStep: Double? = nil
        /// The mean chroma under which a flat preview takes `lowChromaLumaStep`.
        var lowChroma = 0.0
        /// A flat preview quantized by trellis on its own step (`FlatTrellis`, `trellis(gradient:)`); nil:
        /// by libjpeg (decisions 063 and its session 22 section).
        var flatTrellis: FlatTrellis? = nil
        /// A detailed preview's thumbnail further below `detailedStep` by vips' resampling loss (decision 072).
        /// Its tables are Klein's on one table, which is what `tables` gives a detailed preview only with
        /// `chromaOnlyWhenFlat` (checked by `VipsResamplingLossTests`): a row giving detailed previews
        /// their own chroma must not carry it.
        var resamplingLoss: ResamplingLossStep? = nil
        /// A flat preview's tables scaled finer when its mean chroma is low (decision 073, session 25); nil: none.
        var pale: PalePreviewStep? = nil
        /// A flat preview's tables in another shape, Cr on a third table (decision 075, session 26); nil: none.
        var shape: FlatPreviewShape? = nil

        /// The coefficients `lowFrequencyStep` holds: zig-zag 0–2, the DC and AC (0,1) and (1,0).
        static let heldLowFrequencies = 3

        /// PNG's rule (decision 060, session 18): the flat ones 3.25 qualities below, their DC and
        /// lowest AC steps 2 below as before.
        static let rasterPreviews = KleinRule(step: -3.25, detailedStep: 0, detailedGradient: 6, lowFrequencyStep: -2)
        /// WebP's: the flat ones 2.5 below, as its flat downscaled previews (decision 060's fractional step).
        /// Both with the chroma 20 below the luma's, its five lowest steps held (decision 064).
        static let webpPreviews = KleinRule(
            step: -2.5, detailedStep: 0, detailedGradient: 6, chroma: .webpPreviews)
        /// A WebP's near-size thumbnail: Klein's table 6 qualities below the thumbnail's quality in force
        /// when the preview is detailed, one below (as every other thumbnail) when flat. vips makes such
        /// a thumbnail with libwebp's rescaler while decoding, blurrier than the scorer's Lanczos
        /// reference: a detailed one kept 2.7–8.2 points of margin over it at E − 1, 0.34–5.59 at E − 6
        /// on 12 such fixtures the rule was not fitted on; flat ones kept too little (mate_Blinds +0.30 at
        /// E − 1, −0.09 at E − 3) (decision 063, session 19).
        static let webpNearSizeThumbnails = KleinRule(step: -1, detailedStep: -6, detailedGradient: 6)
        /// A WebP's preview at the original's size whose thumbnail is near-size: `webpPreviews`, but a flat one
        /// of a mean chroma of at least 34 takes Klein's table 3.5 below the row's quality, not 2.5 (at the
        /// default 80: 80.5, not 81.5, the chroma 20 below that). One step is the least that takes flower under
        /// 0.91× vips' bytes (a second put t19b's dune and fallenleaf below vips'). The chroma gate is a mend:
        /// without it t19b's mate_Wood (16.5) and flower's gray copy (0) fell below vips' at that step; 34 lies
        /// between the bench's elephants (30.7) and LadyBird (38.0), under flower's 44.6 (decision 064, session 20).
        static let webpNearSizePreviews = KleinRule(
            step: -2.5, detailedStep: 0, detailedGradient: 6, chroma: .webpPreviews, colourfulStep: -3.5,
            colourfulChroma: 34)

        /// HEIC's and AVIF's previews at the original's size (decision 067): Klein's table at the quality in
        /// force when flat, its chroma as a WebP preview's (20 below, five steps held: HEVC's and AV1's 4:2:0
        /// chroma reaches libjpeg low-passed, as VP8's does); 2 above it, one table, when detailed. A flat
        /// one further down fell below vips' score on test_gray (−0.06 at E − 1), whose chroma is empty, and
        /// a coarser chroma on dune (−0.21 at 30 below); the detailed china was −2.0 at E with that chroma,
        /// +0.49 at E + 2 without.
        /// A gray one (mean chroma under 2: test_gray's is 0, the bench's least colourful photo's 16.5) holds
        /// its luma's DC and two lowest AC steps 2 above: its AVIF was −0.08 below vips' at E, +0.05 at E + 1 on
        /// one table, +0.46 with that hold (decision 067, "Session 20 (lead): gray previews"; both tables' then,
        /// the luma's since session 21: a gray picture's chroma has no coefficients for its steps to change).
        /// Since session 25 (decision 073, g25) that hold is 6 above and reaches a mean chroma of 14 (kleiber's pale
        /// crops, 0.04–0.63 below vips' at E; a gray picture takes the gray path since decision 069), and from 14
        /// to 20 the flat tables are scaled by 0.95 (`PalePreviewStep`).
        static let heifPreviews = KleinRule(
            step: 0, detailedStep: 2, detailedGradient: 6, chroma: .webpPreviews, chromaOnlyWhenFlat: true,
            lowChromaLumaStep: 6, lowChroma: 14, pale: .heifPreviews, shape: .heifPreviews)
        /// HEIC's and AVIF's previews at the original's size whose thumbnail is near-size (a small original): `heifPreviews`,
        /// but a pale flat one (mean chroma under 20: test_gray's is 0, the bench's least colourful flat preview at
        /// the original's size mate_Storm's 24.0) holds its luma's DC and two lowest AC steps 6 above. The hold
        /// of both tables' at E + 2 for gray ones left v20's test_gray 600×427 HEIC 0.37 and mate_Wood 800×450
        /// (16.6) 0.18 below vips'; 6 above they are +0.29 and +0.56. On larger pale originals it only spent
        /// bytes (v20's kleiber 1920×1080 and mate_Wood 1600×1200 previews +4.7% and +6.6%, already 0.65 and
        /// 1.17 over vips'), so it is the near-size row's (decision 067, "Session 21 (h21)": the threshold and
        /// the step were chosen on that validation set).
        static let heifNearSizePreviews = KleinRule(
            step: 0, detailedStep: 2, detailedGradient: 6, chroma: .webpPreviews, chromaOnlyWhenFlat: true,
            lowChromaLumaStep: 6, lowChroma: 20, shape: .heifPreviews)
        /// HEIC's and AVIF's downscaled previews: Klein's table at the column's quality, a flat one's chroma
        /// as `heifPreviews`' (decision 067). The chroma cost elephants' and path's detailed ones 0.5 and
        /// 1.2 points, both below vips'; a 2048-wide preview of a flat photo measured 0.8–1.6, of elephants 14.7.
        static let heifDownscaledPreviews = KleinRule(
            step: 0, detailedStep: 0, detailedGradient: 6, chroma: .webpPreviews, chromaOnlyWhenFlat: true)
        /// AVIF's downscaled previews: `heifDownscaledPreviews`, but a flat one 2 below the column's quality.
        /// AV1 at `heif-enc -A -q 80` leaves a smoother picture than HEVC, whose JPEG keeps more margin at a
        /// lower table: on the bench's 8 flat ones E − 2 keeps fallenleaf +0.39 over vips', the thinnest (HEIC's
        /// at E − 2: fallenleaf +0.32, kleiber +0.31, LadyBird +0.34), and takes fallenleaf from 0.920× to
        /// 0.903× vips' bytes (decision 067, "Session 21 (h21)").
        static let avifDownscaledPreviews = KleinRule(
            step: -2, detailedStep: 0, detailedGradient: 6, chroma: .webpPreviews, chromaOnlyWhenFlat: true)
        /// HEIC's and AVIF's near-size thumbnails, the original re-encoded as its preview is: Klein's table
        /// 2 below the thumbnail's quality in force with the preview's chroma (20 below, five steps held) when
        /// flat, one below on one table when detailed. Further down test_gray's fell below vips' (−1.39 at
        /// E − 5), and only the luma's step tells on a gray photo; WebP's detailed E − 6 (decision 063) put
        /// three china HEIC/AVIFs of v20's validation set 1.9–2.6 below vips', E − 1 keeps them +0.19 to +1.00
        /// (decision 067). A pale flat one (mean chroma under 20, as `heifNearSizePreviews`') holds its luma's DC
        /// and two lowest AC steps 3 above the quality in force: v20's test_gray 600×427 HEIC thumbnail went
        /// from −0.47 to +0.25 over vips' (mate_Wood 800×450 +0.05 → +0.60; decision 067, "Session 21 (h21)").
        /// A flat one is quantized by trellis at the quality in force in place of libjpeg's 2 below
        /// (`FlatTrellis.heifNearSizeThumbnails`).
        static let heifNearSizeThumbnails = KleinRule(
            step: -2, detailedStep: -1, detailedGradient: 6, chroma: .webpPreviews, chromaOnlyWhenFlat: true,
            lowChromaLumaStep: 3, lowChroma: 20, flatTrellis: .heifNearSizeThumbnails,
            resamplingLoss: .heifNearSizeThumbnails)

        /// Whether the tables depend on the preview's chroma: a flat preview under a rule with `colourfulStep`,
        /// `lowChromaLumaStep` or `pale`.
        func measuresChroma(gradient: Double) -> Bool {
            (colourfulStep != nil || lowChromaLumaStep != nil || pale != nil) && gradient < detailedGradient
        }

        /// `tables` with the luma's lowest steps held at `lowChromaLumaStep` when a flat preview's `meanChroma`
        /// is under `lowChroma`.
        private func holdingLowChromaLuma(_ tables: QuantizationTables, _ inForce: Int, meanChroma: Double?)
            -> QuantizationTables
        {
            guard let lowChromaLumaStep, let meanChroma, meanChroma < lowChroma else { return tables }
            let finer = SourceEncoderSettings.klein(inForce, step: lowChromaLumaStep)
            return QuantizationTables(
                luma: tables.holdingLowFrequencies(Self.heldLowFrequencies, of: finer).luma, chroma: tables.chroma)
        }

        /// The step of a flat preview of `meanChroma` (nil: not measured).
        private func flatStep(meanChroma: Double?) -> Double {
            guard let colourfulStep, let meanChroma, meanChroma >= colourfulChroma else { return step }
            return colourfulStep
        }

        /// The quality Klein's table is scaled at, from the quality in force and the preview's detail (and
        /// its mean chroma, when `measuresChroma`).
        func quality(_ inForce: Int, gradient: Double, meanChroma: Double? = nil) -> Double {
            let step = gradient >= detailedGradient ? detailedStep : flatStep(meanChroma: meanChroma)
            return min(max(Double(inForce) + step, 1), 100)
        }

        /// The preview's tables, from the quality in force and the preview's detail (and its mean chroma).
        func tables(_ inForce: Int, gradient: Double, meanChroma: Double? = nil) -> QuantizationTables {
            let tables =
                gradient >= detailedGradient
                ? SourceEncoderSettings.klein(inForce, step: detailedStep)
                : holdingLowChromaLuma(
                    SourceEncoderSettings.klein(
                        inForce, step: flatStep(meanChroma: meanChroma), holdingLowFrequenciesAt: lowFrequencyStep),
                    inForce, meanChroma: meanChroma)
            var result = tables
            if let chroma, !(chromaOnlyWhenFlat && gradient >= detailedGradient) {
                result = chroma.tables(
                    tables, lumaQuality: quality(inForce, gradient: gradient, meanChroma: meanChroma))
            }
            // A pale flat one's tables, chroma and all, scaled finer (`PalePreviewStep`).
            if let pale, gradient < detailedGradient { result = pale.tables(result, meanChroma: meanChroma) }
            // Then in the searched shape, Cr on its own table (`FlatPreviewShape`).
            if let shape, gradient < detailedGradient { result = shape.tables(result) }
            return result
        }
    }

    /// The preview's and the thumbnail's steps of a thumbnail nearly the preview's size.
    struct NearSizeSteps: Sendable, Equatable {
        /// Added to the spec's quality of the preview (whichever its size).
        let previewQualityStep: Int
        /// Added to the spec's thumbnail quality.
        let thumbnailQualityStep: Int
    }
}
