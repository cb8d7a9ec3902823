/// Another shape for a flat HEIC's or AVIF's preview at the original's size: Y, Cb and Cr each on a table of
/// its own, found by an oracle search on dune's preview (decision 075).
///
/// Every uniform change of main's tables (Klein's steps, fractional steps, zero bias, trellis, chroma
/// sharpening) traded about 0.5 points of SSIMULACRA2 for 1 % of both files' bytes on dune, which kept it
/// over 0.91× vips' bytes. A greedy search over the three tables' zig-zag diagonals found a shape that
/// gains at equal bytes instead: the luma's diagonals 2–4 about 1.25× coarser, its higher ones finer, the
/// chroma DC 3 (not 4), Cr a little finer than Cb at its middle frequencies. Each step of the rule's tables
/// is scaled by the searched table's step over the one the search started from (main's dune tables, the
/// flat rule at the default quality), then all by `scale`, rounded half to even as the measurement's numpy.
/// Measured (the release tool on the bench, `bench/imaging-validate.py run`): HEIC dune 0.928× → 0.909× vips'
/// bytes at +0.49, AVIF 0.917× → 0.901× at +0.50, HEIC mate_FreshFlower 0.912× → 0.903×; no bench preview below
/// vips', least margin +0.17 (mate_Blinds HEIC); of 20 held-out sources none below, the least +0.04
/// (GreenMeadow 1280×960 q50 AVIF, −0.36 on main).
extension SourceEncoderSettings {
    struct FlatPreviewShape: Sendable, Equatable {
        /// The searched steps, natural order: Y, Cb, Cr.
        let searched: [[UInt32]]
        /// The steps the search started from, natural order: Y, and the chroma's (Cb's and Cr's alike).
        let start: [[UInt32]]
        /// All steps' factor after the shape (finer than 1: the shape alone spent the margin).
        let scale: Double

        /// HEIC's and AVIF's flat previews at the original's size (decision 075, session 26).
        static let heifPreviews = FlatPreviewShape(
            searched: [
                [
                    4, 5, 9, 11, 13, 15, 23, 34, 5, 10, 11, 15, 14, 16, 22, 30, 9, 11, 13, 13, 18, 25, 37, 48,
                    11, 15, 13, 16, 22, 30, 38, 56, 13, 14, 18, 22, 28, 34, 47, 76, 15, 16, 25, 30, 34, 45, 68, 96,
                    23, 22, 37, 38, 47, 68, 91, 125, 34, 30, 48, 56, 76, 96, 125, 168,
                ],
                [
                    3, 5, 12, 17, 21, 30, 46, 69, 5, 8, 19, 22, 28, 33, 43, 61, 7, 19, 20, 26, 35, 50, 74, 109,
                    17, 22, 26, 33, 43, 60, 86, 126, 21, 28, 35, 43, 56, 76, 106, 152, 30, 33, 50, 60, 76, 100, 136,
                    191, 46, 43, 74, 86, 106, 136, 182, 250, 69, 61, 109, 126, 152, 191, 250, 255,
                ],
                [
                    3, 6, 11, 13, 21, 27, 46, 69, 6, 7, 15, 22, 25, 33, 43, 61, 6, 15, 20, 23, 35, 50, 74, 109,
                    13, 22, 23, 33, 43, 60, 86, 126, 21, 25, 35, 43, 56, 76, 106, 152, 27, 33, 50, 60, 76, 100, 136,
                    191, 46, 43, 74, 86, 106, 136, 182, 250, 69, 61, 109, 126, 152, 191, 250, 255,
                ],
            ],
            start: [
                [
                    4, 5, 6, 8, 10, 15, 23, 34, 5, 7, 8, 11, 14, 16, 22, 30, 6, 8, 10, 13, 18, 25, 37, 54,
                    8, 11, 13, 16, 22, 30, 43, 63, 10, 14, 18, 22, 28, 38, 53, 76, 15, 16, 25, 30, 38, 50, 68, 96,
                    23, 22, 37, 43, 53, 68, 91, 125, 34, 30, 54, 63, 76, 96, 125, 168,
                ],
                [
                    4, 5, 11, 15, 21, 30, 46, 69, 5, 7, 17, 22, 28, 33, 43, 61, 6, 17, 20, 26, 35, 50, 74, 109,
                    15, 22, 26, 33, 43, 60, 86, 126, 21, 28, 35, 43, 56, 76, 106, 152, 30, 33, 50, 60, 76, 100, 136,
                    191, 46, 43, 74, 86, 106, 136, 182, 250, 69, 61, 109, 126, 152, 191, 250, 255,
                ],
            ],
            scale: 0.93)

        /// `tables` in this shape: three tables (a gray one unchanged).
        func tables(_ tables: QuantizationTables) -> QuantizationTables {
            guard let chroma = tables.chroma else { return tables }
            func shaped(_ steps: [UInt32], _ searched: [UInt32], _ start: [UInt32]) -> [UInt32] {
                (0..<64).map { k in
                    QuantizationTables.step(Double(steps[k]) * (Double(searched[k]) / Double(start[k])) * scale)
                }
            }
            return QuantizationTables(
                luma: shaped(tables.luma, searched[0], start[0]), chroma: shaped(chroma, searched[1], start[1]),
                cr: shaped(chroma, searched[2], start[1]))
        }
    }
}
