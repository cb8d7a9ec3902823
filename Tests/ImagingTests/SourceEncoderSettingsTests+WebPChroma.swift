import Testing

@testable import Imaging

/// WebP's coarser chroma tables, as the tests expect them (decision 064).
extension SourceEncoderSettingsTests {
    /// Klein's table at `luma` for luma, and at `chroma` for chroma except the `held` coefficients
    /// (natural order), which are the luma's: WebP's thumbnails and previews at the original's size
    /// (decision 064). Neither Klein table alone.
    static func coarseChroma(luma: Double, chroma: Double, held: [Int]) -> QuantizationTables {
        let (fine, coarse) = (QuantizationTables(kleinQuality: luma), QuantizationTables(kleinQuality: chroma))
        var steps = coarse.chroma!
        for k in held { steps[k] = fine.luma[k] }
        let tables = QuantizationTables(luma: fine.luma, chroma: steps)
        #expect(tables != fine && tables != coarse && tables.luma != tables.chroma)
        return tables
    }

    /// A WebP preview at the original's size on Klein's table at `quality`: its chroma 20 qualities
    /// below, the five lowest steps in zig-zag order the luma's (decision 064).
    static func webpOriginalSizePreview(_ quality: Double) -> QuantizationTables {
        coarseChroma(luma: quality, chroma: quality - 20, held: [0, 1, 8, 16, 9])
    }
}
