import Foundation

/// Turns a decoded raster's 8-bit rows into the float RGBX rows the resampler reads: alpha is
/// flattened onto white (so `dominantColor` and the JPEGs show what a viewer on a white page
/// shows), and wide-gamut nclx colour (Display P3, BT.2020) is converted to sRGB through linear
/// light, since such an original has no ICC profile a derivative could carry. An nclx transfer other
/// than sRGB's (linear, plain gammas, and HDR's PQ and HLG, tone mapped) is converted too
/// (`RasterRowConverter+Transfer`, decision 074).
struct RasterRowConverter {
    /// Layout of the decoded rows.
    let layout: DecodedRaster.Layout
    /// Linear-light 3×3 matrix from the original's primaries to sRGB's, row-major; nil for sRGB.
    let toSRGB: [Float]?
    /// The transfer's conversion when it is not sRGB's (nil: the rows are read as sRGB, as before).
    let transfer: TransferConversion?

    /// sRGB-encoded byte → linear light, 0…1 (IEC 61966-2-1).
    private static let linear: [Float] = (0..<256).map { value in
        let v = Double(value) / 255
        return Float(v <= 0.04045 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4))
    }
    /// Entries of `encoded`: linear light in steps of 1/4095.
    private static let encodedSteps = 4096
    /// Linear light → sRGB-encoded value, 0…255, as a float for the resampler.
    private static let encoded: [Float] = (0..<encodedSteps).map { index in
        let v = Double(index) / Double(encodedSteps - 1)
        return Float(255 * (v <= 0.0031308 ? 12.92 * v : 1.055 * pow(v, 1 / 2.4) - 0.055))
    }

    /// A converter for `layout`, converting from the nclx `primaries` (ITU-T H.273 Table 2) when
    /// they are not sRGB's (1, BT.709) or unspecified (2).
    /// An nclx `transfer` (H.273 Table 3) other than sRGB's is converted from `bitsPerSample`-bit
    /// code values (`.rgb16` rows when over 8), HDR's tone mapped from `peakLuminance` cd/m²
    /// (`TransferCurve.defaultPQPeak` when nil; HLG's is always 1000).
    init(
        layout: DecodedRaster.Layout, nclxPrimaries primaries: Int? = nil, nclxTransfer: Int? = nil,
        bitsPerSample: Int = 8, peakLuminance: Double? = nil
    ) {
        self.layout = layout
        let curve = nclxTransfer.map { TransferCurve(nclxTransfer: $0) } ?? .sRGB
        transfer =
            curve == .sRGB
            ? nil
            : TransferConversion(
                curve: curve, bitsPerSample: bitsPerSample, primaries: primaries, peakLuminance: peakLuminance)
        switch primaries {
        case 12:  // SMPTE EG 432-1: Display P3 (D65)
            toSRGB = [1.2249401, -0.2249404, 0, -0.0420569, 1.0420571, 0, -0.0196376, -0.0786361, 1.0982735]
        case 9:  // BT.2020 / BT.2100
            toSRGB = [
                1.6604910, -0.5876411, -0.0728499, -0.1245505, 1.1328999, -0.0083494, -0.0181508, -0.1005789, 1.1187297,
            ]
        default:
            toSRGB = nil
        }
    }

    /// True when the conversion only widens: opaque RGB rows already in sRGB, whose RGBX bytes
    /// (255 in the fourth) are the converted floats rounded.
    var isByteCopy: Bool { layout == .rgb && toSRGB == nil && transfer == nil }

    /// Converts `width` pixels of `source` into `width` × 4 floats.
    func convert(_ source: UnsafePointer<UInt8>, width: Int, into target: UnsafeMutablePointer<Float>) {
        if let transfer {
            convert(source, width: width, into: target, transfer: transfer)
            return
        }
        let step = layout.bytesPerPixel
        for x in 0..<width {
            let p = source + x * step
            var r = Float(Int32(p[0]))
            var g = Float(Int32(p[1]))
            var b = Float(Int32(p[2]))
            if let m = toSRGB {
                let lr = Self.linear[Int(p[0])]
                let lg = Self.linear[Int(p[1])]
                let lb = Self.linear[Int(p[2])]
                r = Self.encode(m[0] * lr + m[1] * lg + m[2] * lb)
                g = Self.encode(m[3] * lr + m[4] * lg + m[5] * lb)
                b = Self.encode(m[6] * lr + m[7] * lg + m[8] * lb)
            }
            Self.store(r, g, b, alpha: step == 4 ? p[3] : nil, into: target, at: x)
        }
    }

    /// Writes pixel `x`'s RGBX floats into `target`, a straight `alpha` (nil: opaque) over white:
    /// c·a + 255·(1 − a), in the encoded values as browsers do.
    @inline(__always)
    static func store(
        _ r: Float, _ g: Float, _ b: Float, alpha: UInt8?, into target: UnsafeMutablePointer<Float>, at x: Int
    ) {
        var (r, g, b) = (r, g, b)
        if let alpha {
            let a = Float(Int32(alpha)) * (1 / 255)
            let white = 255 * (1 - a)
            r = r * a + white
            g = g * a + white
            b = b * a + white
        }
        target[4 * x] = r
        target[4 * x + 1] = g
        target[4 * x + 2] = b
        target[4 * x + 3] = 255
    }

    /// Linear light (clipped to 0…1) to an sRGB-encoded float.
    static func encode(_ value: Float) -> Float {
        let clipped = min(max(value, 0), 1)
        return encoded[Int(clipped * Float(encodedSteps - 1) + 0.5)]
    }
}
