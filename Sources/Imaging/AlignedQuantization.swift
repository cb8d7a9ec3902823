/// Quantization tables for a preview that re-encodes the original at its own size, aligned to
/// the original's tables.
///
/// Such a preview's 8×8 blocks can sit exactly on the original's blocks (the same grid, mirrored
/// or turned whole when the EXIF orientation flips an axis whose length is a multiple of the
/// block). The decoded original's DCT coefficients are then, up to rounding, multiples of the
/// original's steps `q`, and a step `m·q` re-quantizes them without a second rounding error of
/// its own: where the original was coarser than our table (`q` > our step) the coefficient comes
/// through exactly and costs what it cost the original; elsewhere `m` is the largest multiple not
/// coarser than our step. Our Robidoux table at the same quality put a second, unaligned rounding on
/// top of the original's and spent bytes re-describing its noise.
///
/// Measured on the bench photos (docs/architecture.md, "Aligned re-encode"): orientation/Portrait_1
/// (a quality-73 original) 86.72 → 91.04 SSIMULACRA2 with 3% fewer bytes, where vips scores 87.36.
/// Chroma is aligned only when the original is 4:2:0 like the preview and the flipped axes are whole
/// chroma blocks; a shifted chroma grid re-quantized with the original's table lost 2 points
/// (orientation/Landscape_2), so it keeps ours.
struct AlignedQuantization: Equatable {
    /// 64 luma steps, natural order, as the encoder uses them.
    let luma: [UInt32]
    /// 64 chroma steps (nil for a gray image).
    let chroma: [UInt32]?

    /// The aligned tables for re-encoding `info`'s image at its own size upright at `quality`, or
    /// nil when no component's grid lines up (or the header gave no usable tables).
    init?(info: ImageInfo, quality: Int) {
        let components = info.componentQuantization
        let gray = info.colorSpace == .grayscale && components.count == 1
        let color = info.colorSpace == .ycbcr && components.count == 3
        guard gray || color else { return nil }
        let ours = Self.scaled(JPEGEncoder.robidouxTable, quality: quality)
        let oursChroma = Self.scaled(JPEGEncoder.robidouxTable, quality: JPEGEncoder.chromaQuality(for: quality))

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
        let alignedChroma = chromaAligned ? Self.aligned(oursChroma, to: components[1].steps, transposed: transposes) : nil
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

    /// `table` scaled at `quality` as libjpeg's jpeg_add_quant_table does for a baseline table.
    static func scaled(_ table: [UInt32], quality: Int) -> [UInt32] {
        let q = min(max(quality, 1), 100)
        let scale = UInt32(q < 50 ? 5000 / q : 200 - 2 * q)
        return table.map { min(max(($0 * scale + 50) / 100, 1), 255) }
    }
}
