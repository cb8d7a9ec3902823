import Foundation

/// What turns the code values of an nclx original whose transfer is not sRGB's into sRGB
/// (decision 074): the transfer's inverse to linear light (one table entry per code value),
/// HLG's OOTF, the primaries' matrix, for HDR the tone map and a hue-keeping gamut clip, then
/// sRGB's curve.
struct TransferConversion: Sendable {
    /// The original's transfer (never `.sRGB`).
    let curve: TransferCurve
    /// Code value → `curve.linear` of it, for every value of the samples' bits.
    let toLinear: [Float]
    /// The original's luminance weights (of its primaries), for HLG's OOTF.
    let lumaWeights: (Float, Float, Float)
    /// HLG's OOTF scale: its display peak over reference white.
    let hlgScale: Float
    /// The tone map to SDR for PQ and HLG (nil for the SDR curves, or a PQ peak at reference white).
    let toneMap: HDRToneMap?

    /// The conversion of `curve` from `bitsPerSample`-bit samples of the nclx `primaries`; a PQ
    /// original's peak is `peakLuminance` cd/m² (1000 when it does not say), HLG's is 1000.
    init(curve: TransferCurve, bitsPerSample: Int, primaries: Int?, peakLuminance: Double?) {
        self.curve = curve
        let bits = min(max(bitsPerSample, 1), 16)
        let top = Double((1 << bits) - 1)
        toLinear = (0...(1 << bits) - 1).map { Float(curve.linear(Double($0) / top)) }
        switch primaries {
        case 9: lumaWeights = (0.2627, 0.6780, 0.0593)  // BT.2020 (BT.2100 Table 5's Ys)
        case 12: lumaWeights = (0.2289746, 0.6917385, 0.0792869)  // Display P3
        default: lumaWeights = (0.2126, 0.7152, 0.0722)  // BT.709 / sRGB
        }
        hlgScale = Float(TransferCurve.hlgPeak / TransferCurve.referenceWhite)
        switch curve {
        case .pq:
            var peak = TransferCurve.defaultPQPeak
            if let said = peakLuminance, said >= 1, said <= 10000 { peak = said }
            toneMap = HDRToneMap(peakLuminance: peak)
        case .hlg: toneMap = HDRToneMap(peakLuminance: TransferCurve.hlgPeak)
        default: toneMap = nil
        }
    }
}

extension RasterRowConverter {
    /// Converts `width` pixels of `source` (8-bit RGB(A), or `.rgb16`) into `width` × 4 sRGB-encoded
    /// floats through `transfer`.
    func convert(
        _ source: UnsafePointer<UInt8>, width: Int, into target: UnsafeMutablePointer<Float>,
        transfer: TransferConversion
    ) {
        let step = layout.bytesPerPixel
        let wide = layout == .rgb16
        let raw = UnsafeRawPointer(source)
        let isHLG = transfer.curve == .hlg
        let hdr = transfer.curve.isHDR
        let (wr, wg, wb) = transfer.lumaWeights
        transfer.toLinear.withUnsafeBufferPointer { table in
            let top = table.count - 1
            for x in 0..<width {
                var r: Float
                var g: Float
                var b: Float
                if wide {
                    let p = raw + x * step
                    r = table[min(Int(UInt16(littleEndian: p.loadUnaligned(as: UInt16.self))), top)]
                    g = table[min(Int(UInt16(littleEndian: p.loadUnaligned(fromByteOffset: 2, as: UInt16.self))), top)]
                    b = table[min(Int(UInt16(littleEndian: p.loadUnaligned(fromByteOffset: 4, as: UInt16.self))), top)]
                } else {
                    let p = source + x * step
                    r = table[min(Int(p[0]), top)]
                    g = table[min(Int(p[1]), top)]
                    b = table[min(Int(p[2]), top)]
                }
                if isHLG {
                    // BT.2100's OOTF: Fd = Lw · Ys^(γ − 1) · E, γ = 1.2 at Lw = 1000 cd/m², over reference white.
                    let ys = wr * r + wg * g + wb * b
                    let k = ys > 0 ? transfer.hlgScale * pow(ys, 0.2) : 0
                    r *= k
                    g *= k
                    b *= k
                }
                if let m = toSRGB {
                    (r, g, b) = (
                        m[0] * r + m[1] * g + m[2] * b, m[3] * r + m[4] * g + m[5] * b, m[6] * r + m[7] * g + m[8] * b
                    )
                }
                if hdr { (r, g, b) = Self.toSDR(r, g, b, toneMap: transfer.toneMap) }
                Self.store(
                    Self.encode(r), Self.encode(g), Self.encode(b), alpha: step == 4 ? source[x * step + 3] : nil,
                    into: target, at: x)
            }
        }
    }

    /// HDR light in sRGB's primaries (over reference white) → SDR: the tone map on max(R, G, B)
    /// with one gain for the three, then colours outside sRGB (a component below 0) moved
    /// towards the grey of their luminance until they fit, and any light still over white (past
    /// the peak) scaled down whole, so hues hold where clipping each component would skew them.
    static func toSDR(_ r: Float, _ g: Float, _ b: Float, toneMap: HDRToneMap?) -> (Float, Float, Float) {
        var (r, g, b) = (r, g, b)
        let high = max(r, g, b)
        if let toneMap, high > toneMap.knee {
            let gain = toneMap.map(high) / high
            r *= gain
            g *= gain
            b *= gain
        }
        let low = min(r, g, b)
        if low < 0 {
            let y = 0.2126 * r + 0.7152 * g + 0.0722 * b
            guard y > 0 else { return (0, 0, 0) }
            let t = y / (y - low)
            r = y + t * (r - y)
            g = y + t * (g - y)
            b = y + t * (b - y)
        }
        let top = max(r, g, b)
        if top > 1 {
            r /= top
            g /= top
            b /= top
        }
        return (r, g, b)
    }
}
