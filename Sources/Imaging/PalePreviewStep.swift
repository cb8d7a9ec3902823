/// A finer step for the flat original-size preview of a pale photo (decision 073, "Session 25 (g25)").
///
/// Our Klein table is coarser than vips' Annex K Q80 at the luma's middle and high frequencies, and finer
/// at the chroma's lowest. On a colourful photo the chroma keeps the margin over vips' SSIMULACRA2 score; on
/// a pale one (mean chroma under 20: `PreviewDetail.meanChroma`, kleiber's crops 5.0–17.1) the luma is
/// nearly all the score, and the margin goes: 6 of 7 flat kleiber HEIC crops of 730–1948 px were 0.10–0.63
/// below vips' at main's step. Their tables scaled by 0.95 lift the crops from 14 up (+0.22 to +0.31), by
/// 0.9 the paler ones (+0.59 to +1.21, where 0.95 left two at −0.38 and −0.06). The bench's least colourful
/// flat preview (mate_Storm, 24.0) is above both bars, so its bytes do not change.
extension SourceEncoderSettings {
    struct PalePreviewStep: Sendable, Equatable {
        /// The mean chroma under which a flat preview's tables are scaled by `scale`.
        let paleChroma: Double
        let scale: Double
        /// The mean chroma under which they are scaled by `palerScale` instead.
        let palerChroma: Double
        let palerScale: Double

        /// HEIC's and AVIF's flat previews at the original's size (not a near-size thumbnail's: their pale
        /// ones hold their luma's lowest steps 6 above already, `KleinRule.heifNearSizePreviews`).
        static let heifPreviews = PalePreviewStep(paleChroma: 20, scale: 0.95, palerChroma: 14, palerScale: 0.9)

        /// The factor for a flat preview of `meanChroma`; nil: not pale (or not measured).
        func scale(meanChroma: Double?) -> Double? {
            guard let meanChroma, meanChroma < paleChroma else { return nil }
            return meanChroma < palerChroma ? palerScale : scale
        }

        /// `tables` scaled for a flat preview of `meanChroma` (unchanged when it is not pale).
        func tables(_ tables: QuantizationTables, meanChroma: Double?) -> QuantizationTables {
            guard let factor = scale(meanChroma: meanChroma) else { return tables }
            return tables.scaled(by: factor)
        }
    }
}

extension QuantizationTables {
    /// Every step times `factor`, rounded to the nearest (a half to even, as the measurement's numpy
    /// rounded: 5 × 0.9 is 4) and kept in 1…255.
    func scaled(by factor: Double) -> QuantizationTables {
        func scale(_ table: [UInt32]) -> [UInt32] {
            table.map { UInt32(min(max((Double($0) * factor).rounded(.toNearestOrEven), 1), 255)) }
        }
        return QuantizationTables(luma: scale(luma), chroma: chroma.map(scale))
    }
}
