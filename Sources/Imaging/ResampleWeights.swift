import Foundation

/// Lanczos-3 filter weights for resampling one axis from `sourceSize` to `targetSize` samples,
/// precomputed once per output sample so the inner loops only multiply and add.
///
/// Every output sample uses exactly `taps` consecutive source samples starting at `starts[i]`:
/// windows near an edge are shifted inside the image and the weights that fell outside are
/// dropped and the rest renormalised (as Pillow does), so the loops need no bounds checks.
/// Sample centres follow the usual convention: output i sits at source `(i + 0.5) · s − 0.5`.
struct ResampleWeights {
    /// Source samples read per output sample.
    let taps: Int
    /// First source sample for each output sample.
    let starts: [Int]
    /// `targetSize × taps` weights, each row summing to 1.
    let weights: [Float]

    /// Lanczos window radius, in source samples at a scale of 1.
    static let radius = 3.0

    /// Weights for `sourceSize` → `targetSize` samples (1 tap of weight 1 when equal).
    init(sourceSize: Int, targetSize: Int) {
        precondition(sourceSize > 0 && targetSize > 0)
        if sourceSize == targetSize {
            taps = 1
            starts = Array(0..<targetSize)
            weights = [Float](repeating: 1, count: targetSize)
            return
        }
        let factor = Double(sourceSize) / Double(targetSize)
        let filterScale = max(1, factor)  // widen the kernel when shrinking (anti-aliasing)
        let support = Self.radius * filterScale
        let taps = min(sourceSize, Int((2 * support).rounded(.up)) + 1)
        var starts = [Int](repeating: 0, count: targetSize)
        var weights = [Float](repeating: 0, count: targetSize * taps)
        var row = [Double](repeating: 0, count: taps)
        for i in 0..<targetSize {
            let center = (Double(i) + 0.5) * factor - 0.5
            let start = min(max(Int((center - support).rounded(.up)), 0), sourceSize - taps)
            var sum = 0.0
            for k in 0..<taps {
                let w = Self.lanczos3((Double(start + k) - center) / filterScale)
                row[k] = w
                sum += w
            }
            if sum == 0 {  // cannot happen for a sane window; fall back to nearest sample
                row = [Double](repeating: 0, count: taps)
                row[min(max(Int(center.rounded()) - start, 0), taps - 1)] = 1
                sum = 1
            }
            for k in 0..<taps { weights[i * taps + k] = Float(row[k] / sum) }
            starts[i] = start
        }
        self.taps = taps
        self.starts = starts
        self.weights = weights
    }

    /// The Lanczos kernel with a = 3: sinc(x) · sinc(x / 3) for |x| < 3.
    static func lanczos3(_ x: Double) -> Double {
        if x == 0 { return 1 }
        guard abs(x) < radius else { return 0 }
        let px = Double.pi * x
        return radius * sin(px) * sin(px / radius) / (px * px)
    }
}
