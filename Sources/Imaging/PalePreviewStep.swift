/// A finer step for the flat original-size preview of a pale photo (decision 073, "Session 25 (g25)").
///
/// Our Klein table is coarser than vips' Annex K Q80 at the luma's middle and high frequencies, and finer
/// at the chroma's lowest. On a colourful photo the chroma keeps the margin over vips' SSIMULACRA2 score; on
/// a pale one (mean chroma under 20: `PreviewDetail.meanChroma`, kleiber's crops 4.0–17.1) the luma is
/// nearly all the score, and the margin goes: 8 of 13 flat kleiber crops of 730–1948 px were 0.04–0.63
/// below vips' at main's step. From a mean chroma of 14 to 20 their tables scaled by 0.95 lift them (+0.31 and
/// more); under 14 the rule's luma hold does (`KleinRule.lowChromaLumaStep`, 6 above: +0.34 and more, at
/// half the bytes of × 0.9, where × 0.95 left two at −0.38 and −0.06). The bench's least colourful flat
/// preview (mate_Storm, 24.0) is above both bars, so its bytes do not change.
extension SourceEncoderSettings {
    struct PalePreviewStep: Sendable, Equatable {
        /// The mean chroma from which a flat preview is scaled (under it, the rule's low-chroma hold).
        let fromChroma: Double
        /// The mean chroma under which a flat preview's tables are scaled by `scale`.
        let paleChroma: Double
        let scale: Double

        /// HEIC's and AVIF's flat previews at the original's size (not a near-size thumbnail's: their pale
        /// ones hold their luma's lowest steps 6 above already, `KleinRule.heifNearSizePreviews`).
        static let heifPreviews = PalePreviewStep(fromChroma: 14, paleChroma: 20, scale: 0.95)

        /// The factor for a flat preview of `meanChroma`; nil: outside the band (or not measured).
        func scale(meanChroma: Double?) -> Double? {
            guard let meanChroma, meanChroma >= fromChroma, meanChroma < paleChroma else { return nil }
            return scale
        }

        /// `tables` scaled for a flat preview of `meanChroma` (unchanged outside the band).
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
        func scale(_ table: [UInt32]) -> [UInt32] { table.map { Self.step(Double($0) * factor) } }
        return QuantizationTables(luma: scale(luma), chroma: chroma.map(scale), cr: cr.map(scale))
    }

    /// A scaled step as JPEG can carry it: rounded half to even (as the measurements' numpy) and kept in 1…255.
    static func step(_ value: Double) -> UInt32 { UInt32(min(max(value.rounded(.toNearestOrEven), 1), 255)) }
}
