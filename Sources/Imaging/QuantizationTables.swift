/// The quantization steps a derivative is encoded with: N. Robidoux's table (mozjpeg's default)
/// scaled by quality like libjpeg, chroma at `JPEGEncoder.chromaQualityBoost` above, and the luma DC step at
/// `lumaDCQualityBoost` above — or, for a preview that re-encodes the original at its own size,
/// the same steps aligned to the original's (`init(aligningTo:quality:)`).
///
/// The luma DC step: Robidoux's 16 at quality 80 is 6, which leaves flat gradients (sky, walls)
/// in visible 8×8 steps, and SSIMULACRA2 punishes that hard. DC at quality + 4 (5 at 80) costs a
/// few bits per block in the DC scan: on the bench photos mate_TwoWings' preview went −0.08 →
/// +0.49 against vips for 1% more bytes, mate_Wood's −0.05 → +0.43 for 0.8%
/// (docs/decisions/019-aligned-reencode-dc-step-qualities.md).
///
/// The aligned tables: such a preview's 8×8 blocks can sit exactly on the original's blocks (the
/// same grid, mirrored or turned whole when the EXIF orientation flips an axis whose length is a
/// multiple of the block). The decoded original's DCT coefficients are then, up to rounding,
/// multiples of the original's steps `q`, and a step `m·q` re-quantizes them without a second
/// rounding error of its own: where the original was coarser than our table (`q` > our step) the
/// coefficient comes through exactly and costs what it cost the original; elsewhere `m` is the
/// largest multiple not coarser than our step. Our own table at the same quality put a second,
/// unaligned rounding on top of the original's and spent bytes re-describing its noise.
/// Measured on the bench photos: orientation/Portrait_1 (a quality-73 original) 86.72 → 91.04
/// SSIMULACRA2 with 3% fewer bytes, where vips scores 87.36. Chroma is aligned only when the
/// original is 4:2:0 like the preview and the flipped axes are whole chroma blocks; a shifted
/// chroma grid re-quantized with the original's table lost 2 points (orientation/Landscape_2),
/// so it keeps ours.
struct QuantizationTables: Equatable {
    /// 64 luma steps, natural order, as the encoder uses them.
    let luma: [UInt32]
    /// 64 chroma steps, natural order (nil for a gray image): Cb's, and Cr's when `cr` is nil.
    let chroma: [UInt32]?
    /// 64 steps of Cr's own, natural order, in a third table; nil: Cr on `chroma`'s
    /// (docs/decisions/075-dune-oracle-tables-per-component.md).
    private(set) var cr: [UInt32]? = nil

    /// How far above the quality the luma DC step is scaled (see the type's comment).
    static let lumaDCQualityBoost = 4

    /// Our tables at `quality`, chroma `chromaBoost` above it; `chroma` is nil for a gray image.
    init(quality: Int, gray: Bool = false, chromaBoost: Int = JPEGEncoder.chromaQualityBoost) {
        var luma = Self.scaled(JPEGEncoder.robidouxTable, quality: quality)
        luma[0] = Self.scaled([JPEGEncoder.robidouxTable[0]], quality: quality + Self.lumaDCQualityBoost)[0]
        self.luma = luma
        chroma = gray ? nil : Self.scaled(JPEGEncoder.robidouxTable, quality: quality + chromaBoost)
    }

    /// Klein, Silverstein and Carney's table (mozjpeg's `jcparam.c` set 5), natural order: Robidoux's
    /// with finer low frequencies (10, 12, 14 against 16, 16, 16 in the first row).
    static let kleinTable: [UInt32] = [
        10, 12, 14, 19, 26, 38, 57, 86,
        12, 18, 21, 28, 35, 41, 54, 76,
        14, 21, 25, 32, 44, 63, 92, 136,
        19, 28, 32, 41, 54, 75, 107, 157,
        26, 35, 44, 54, 70, 95, 132, 190,
        38, 41, 63, 75, 95, 125, 170, 239,
        57, 54, 92, 107, 132, 170, 227, 312,
        86, 76, 136, 157, 190, 239, 312, 419,
    ]

    /// Klein's table at `quality` for luma and chroma alike, with no DC or chroma boost: the shape
    /// measured for PNG and WebP previews that keep the original's size
    /// (docs/decisions/060-klein-tables-for-original-size-previews.md).
    init(kleinQuality quality: Int, gray: Bool = false) {
        let steps = Self.scaled(Self.kleinTable, quality: quality)
        luma = steps
        chroma = gray ? nil : steps
    }

    /// Klein's table at a quality between two whole ones, in quarter steps: libjpeg's scale (200 − 2q
    /// percent, for q from 50) at that quality, each step rounded half up as libjpeg rounds. A
    /// whole quality gives `init(kleinQuality:)`'s steps; so does a quality under 50 (rounded down).
    /// For a table between two qualities, as the flat WebP photos' downscaled previews needed
    /// (docs/decisions/060-klein-tables-for-original-size-previews.md).
    init(kleinQuality quality: Double, gray: Bool = false) {
        let quarters = Int((min(max(quality, 1), 100) * 4).rounded(.down))
        guard quarters % 4 != 0, quarters >= 200 else {
            self.init(kleinQuality: quarters / 4, gray: gray)
            return
        }
        // 200 − 2q percent is (800 − 2·quarters) / 4 percent: in hundredths of a percent, times 25.
        let steps = Self.scaled(Self.kleinTable, hundredthsOfPercent: UInt32(800 - 2 * quarters) * 25)
        self.init(luma: steps, chroma: gray ? nil : steps)
    }

    init(luma: [UInt32], chroma: [UInt32]?) {
        self.luma = luma
        self.chroma = chroma
    }

    /// Three tables: Cb on `chroma`, Cr on `cr` (ignored for a gray image).
    init(luma: [UInt32], chroma: [UInt32]?, cr: [UInt32]?) {
        self.luma = luma
        self.chroma = chroma
        self.cr = chroma == nil ? nil : cr
    }

    /// Every step as the shim takes them, 64 a table: luma, then chroma, then Cr's own when it has them
    /// (`gd_encode_request`'s `luma_table`, `chroma_table` and `cr_table` point into this).
    var steps: [UInt32] { luma + (chroma ?? []) + (cr ?? []) }

    /// These tables with their first `count` coefficients in zig-zag order (the DC and the lowest AC
    /// ones) taken from `finer`'s, luma and chroma alike: a table coarse in its high frequencies and
    /// as fine as `finer` in its low ones (docs/decisions/060-klein-tables-for-original-size-previews.md).
    func holdingLowFrequencies(_ count: Int, of finer: QuantizationTables) -> QuantizationTables {
        assert(cr == nil && finer.cr == nil, "two-table tables only: a third (Cr) table is made last (075)")
        var (luma, chroma) = (self.luma, self.chroma)
        for k in JPEGHeaderParser.zigzag.prefix(count) {
            luma[k] = finer.luma[k]
            if let finerChroma = finer.chroma { chroma?[k] = finerChroma[k] }
        }
        return QuantizationTables(luma: luma, chroma: chroma)
    }

    /// These tables with `coarser`'s chroma steps, except the first `count` in zig-zag order (the DC and
    /// the lowest AC ones), which stay these tables' own: a chroma table coarse in its high frequencies
    /// under an unchanged luma table (docs/decisions/064-webp-chroma-and-source-quality.md). A gray table
    /// (or a gray `coarser`) is returned as it is.
    func coarseningChroma(to coarser: QuantizationTables, keeping count: Int) -> QuantizationTables {
        assert(cr == nil && coarser.cr == nil, "two-table tables only: a third (Cr) table is made last (075)")
        guard let own = chroma, var steps = coarser.chroma else { return self }
        for k in JPEGHeaderParser.zigzag.prefix(count) { steps[k] = own[k] }
        return QuantizationTables(luma: luma, chroma: steps)
    }

    /// The aligned tables for re-encoding `info`'s image at its own size upright at `quality`, or
    /// nil when no component's grid lines up (or the header gave no usable tables).
    init?(aligningTo info: ImageInfo, quality: Int) {
        let components = info.componentQuantization
        let gray = info.colorSpace == .grayscale && components.count == 1
        let color = info.colorSpace == .ycbcr && components.count == 3
        guard gray || color else { return nil }
        let standard = QuantizationTables(quality: quality)
        let (ours, oursChroma) = (standard.luma, standard.chroma!)

        // Which stored axes the orientation mirrors (ImageOrientation's mapping), and whether it transposes.
        let mirrorsX = [2, 3, 7, 8].contains(info.orientation)
        let mirrorsY = [3, 4, 6, 7].contains(info.orientation)
        let transposes = info.orientationSwapsAxes
        func whole(_ block: Int) -> Bool {
            (!mirrorsX || info.width % block == 0) && (!mirrorsY || info.height % block == 0)
        }

        let y = components[0]
        let maxH = components.map(\.horizontalSampling).max()!
        let maxV = components.map(\.verticalSampling).max()!
        let lumaAligned = y.horizontalSampling == maxH && y.verticalSampling == maxV && whole(8)
        var chromaAligned = false
        if color {
            let (cb, cr) = (components[1], components[2])
            // The preview is 4:2:0 (JPEGEncoder); so must the original be for the grids to meet.
            chromaAligned =
                y.horizontalSampling == 2 && y.verticalSampling == 2 && cb.horizontalSampling == 1
                && cb.verticalSampling == 1 && cr.horizontalSampling == 1 && cr.verticalSampling == 1
                && cb.steps == cr.steps && whole(16)
        }
        let alignedLuma = lumaAligned ? Self.aligned(ours, to: y.steps, transposed: transposes) : nil
        let alignedChroma =
            chromaAligned ? Self.aligned(oursChroma, to: components[1].steps, transposed: transposes) : nil
        guard alignedLuma != nil || alignedChroma != nil else { return nil }
        luma = alignedLuma ?? ours
        chroma = color ? alignedChroma ?? oursChroma : nil
    }

    /// Each of `ours` replaced by the largest multiple of the original's step that is not coarser
    /// (the original's step itself where that is coarser already); nil when a step cannot be
    /// written in a baseline table (over 255).
    static func aligned(_ ours: [UInt32], to original: [UInt16], transposed: Bool) -> [UInt32]? {
        var result = [UInt32](repeating: 0, count: 64)
        for k in 0..<64 {
            let step = UInt32(original[transposed ? (k % 8) * 8 + k / 8 : k])
            guard step >= 1, step <= 255 else { return nil }
            var multiple = max(1, ours[k] / step)
            while step * multiple > 255 { multiple -= 1 }
            result[k] = step * multiple
        }
        return result
    }

    /// `table` scaled at `quality` (clamped to 1…100) as libjpeg's jpeg_quality_scaling and
    /// jpeg_add_quant_table do for a baseline table.
    static func scaled(_ table: [UInt32], quality: Int) -> [UInt32] {
        let q = min(max(quality, 1), 100)
        return scaled(table, hundredthsOfPercent: UInt32(q < 50 ? 5000 / q : 200 - 2 * q) * 100)
    }

    /// `table` scaled by `scale` hundredths of a percent, each step rounded half up and kept in
    /// 1…255 as libjpeg's jpeg_add_quant_table does (whole percents for `scaled(_:quality:)`, quarter
    /// qualities for `init(kleinQuality:)` of a `Double`).
    static func scaled(_ table: [UInt32], hundredthsOfPercent scale: UInt32) -> [UInt32] {
        table.map { min(max(($0 * scale + 5000) / 10000, 1), 255) }
    }
}
