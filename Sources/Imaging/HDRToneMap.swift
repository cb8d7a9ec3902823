import Foundation

/// The tone map from an HDR original's light to SDR (decision 074): BT.2390's EETF (ITU-R
/// BT.2390 §5.4.1, the Hermite roll-off in PQ space that libplacebo's `bt2390` and ffmpeg's
/// `tonemap_opencl` implement) from the original's peak to a 203 cd/m² display, so BT.2408's
/// reference white is SDR white's scale: light below the knee (88 cd/m² for a 1000 cd/m² peak:
/// 18% grey and the darker tones) is kept exactly, brighter light rolls off smoothly (reference
/// white itself lands at 0.78, sRGB 229) and the peak lands on SDR white. It is applied to max(R, G, B) and the three scaled by one gain,
/// as Chrome's and ffmpeg's `tonemap` are, so hues and saturation hold.
struct HDRToneMap: Sendable {
    /// The original's peak over reference white (4.93 for 1000 cd/m²).
    let sourcePeak: Float
    /// The light, over reference white, up to which the map is the identity (BT.2390's KS).
    let knee: Float
    /// The map's output at `knee` + (`sourcePeak` − `knee`) · (i / `steps`)², i = 0…`steps`.
    private let table: [Float]
    private static let steps = 1024

    /// The map from a peak of `peakLuminance` cd/m²; nil when that is no brighter than
    /// reference white (nothing to roll off: light is only clipped at SDR white).
    init?(peakLuminance: Double) {
        let white = TransferCurve.referenceWhite
        guard peakLuminance > white * 1.0001 else { return nil }
        let peakSignal = TransferCurve.pqSignal(peakLuminance)
        let maxLum = TransferCurve.pqSignal(white) / peakSignal
        let ks = max(1.5 * maxLum - 0.5, 0)
        // BT.2390's EETF on the PQ signal normalised to the source's range (black at 0).
        func eetf(_ relative: Double) -> Double {
            let e1 = min(TransferCurve.pqSignal(relative * white) / peakSignal, 1)
            guard e1 > ks else { return relative }
            let t = (e1 - ks) / (1 - ks)
            let (t2, t3) = (t * t, t * t * t)
            let e2 = (2 * t3 - 3 * t2 + 1) * ks + (t3 - 2 * t2 + t) * (1 - ks) + (-2 * t3 + 3 * t2) * maxLum
            return TransferCurve.pqLuminance(e2 * peakSignal) / white
        }
        let peak = peakLuminance / white
        let knee = TransferCurve.pqLuminance(ks * peakSignal) / white
        sourcePeak = Float(peak)
        self.knee = Float(knee)
        table = (0...Self.steps).map { i in
            let u = Double(i) / Double(Self.steps)
            return Float(eetf(knee + (peak - knee) * u * u))
        }
    }

    /// The map's output for light `m` (over reference white): 1 at and above the peak.
    func map(_ m: Float) -> Float {
        guard m > knee else { return m }
        guard m < sourcePeak else { return 1 }
        let u = ((m - knee) / (sourcePeak - knee)).squareRoot() * Float(Self.steps)
        let i = min(Int(u), Self.steps - 1)
        let f = u - Float(i)
        return table[i] + (table[i + 1] - table[i]) * f
    }
}
