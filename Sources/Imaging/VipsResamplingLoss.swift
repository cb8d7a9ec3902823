/// How far vips' thumbnail of a small original is from ours before either is encoded: the root mean square
/// difference, in 8-bit luma steps, between the original's lines resampled along the long axis at vips 8.14's
/// sample positions and at ours (decision 072).
///
/// `vipsthumbnail --size x400>` (the bench's, for a landscape original; `400x>` for a portrait one) shrinks
/// both axes by the short side's ratio `s` and rounds the long side to `m = round(n / s)`; libvips' `reduceh`
/// (`reducev` for a portrait one) then centres output sample `i` at `(i + 0.5)·s − 0.5 − e/2` with
/// `e = m·s − n`, a Lanczos-3 widened by `s`, where ours, and PIL's reference the scores are taken against,
/// centre it at `(i + 0.5)·n/m − 0.5`. The two grids drift apart by up to `e/2` source pixels at the long
/// side's ends (0.25 at 640×427 → 600×400), and what that costs vips' SSIMULACRA2 depends on the detail
/// that moves: vips' thumbnail of the bench's china written losslessly scores 83.7, its 600×427 crop's 95.8
/// (`e` −0.07), ours 97.3 for both. The short axis is resampled alike by both; vips' fixed-point weights
/// (reducev's 6-bit, reduceh's 12-bit) and its 1/64-pixel mask phases move the score by under 0.1, so
/// they are not modelled. Above a shrink of 4 vips box-shrinks first, which this does not model (nil).
enum VipsResamplingLoss {
    /// One line in every so many (rows of a landscape original, columns of a portrait one) is measured.
    static let lineStep = 4

    /// The estimate for `image` (RGBX or gray, as displayed) thumbnailed to `thumbnail` (as displayed); nil when
    /// vips' thumbnail would not have that size (or is not a reduction of at most 4 on both axes).
    static func rmsDifference(_ image: PixelBuffer, thumbnail: (width: Int, height: Int)) -> Double? {
        let (width, height, channels) = (image.width, image.height, image.channels)
        guard thumbnail.width > 0, thumbnail.height > 0, thumbnail.width <= width, thumbnail.height <= height,
            thumbnail.width < width || thumbnail.height < height, channels == 1 || channels == 4
        else { return nil }
        let landscape = width >= height
        let (n, m) = landscape ? (width, thumbnail.width) : (height, thumbnail.height)
        let shrink = landscape ? Double(height) / Double(thumbnail.height) : Double(width) / Double(thumbnail.width)
        guard shrink >= 1, shrink < 4, Int((Double(n) / shrink).rounded()) == m else { return nil }
        let difference = DifferenceWeights(source: n, target: m, shrink: shrink)
        guard difference.taps <= n else { return nil }
        let lines = landscape ? height : width
        var line = [Float](repeating: 0, count: n)
        var sum = 0.0
        var count = 0
        image.bytes.withUnsafeBufferPointer { pixels in
            let base = pixels.baseAddress!
            for l in stride(from: 0, to: lines, by: lineStep) {
                // The line's luma in 8-bit steps (libjpeg's weights, as `PreviewDetail`).
                let (first, stride) = landscape ? (l * width * channels, channels) : (l * channels, width * channels)
                for k in 0..<n {
                    let p = base + first + k * stride
                    line[k] =
                        channels == 1
                        ? Float(p[0]) : (77 * Float(p[0]) + 150 * Float(p[1]) + 29 * Float(p[2])) / 256
                }
                sum += difference.sumOfSquares(line)
                count += m
            }
        }
        return count > 0 ? (sum / Double(count)).squareRoot() : nil
    }

    /// Per output sample, vips' weights minus ours over the source samples either reads.
    struct DifferenceWeights {
        let taps: Int
        let starts: [Int]
        let weights: [Float]

        init(source n: Int, target m: Int, shrink: Double) {
            let extra = Double(m) * shrink - Double(n)
            let factor = Double(n) / Double(m)
            var rows: [(start: Int, weights: [Double])] = []
            for i in 0..<m {
                let vips = Self.lanczos(n, centre: (Double(i) + 0.5) * shrink - 0.5 - extra / 2, scale: shrink)
                let ours = Self.lanczos(n, centre: (Double(i) + 0.5) * factor - 0.5, scale: max(factor, 1))
                let start = min(vips.start, ours.start)
                let end = max(vips.start + vips.weights.count, ours.start + ours.weights.count)
                var row = [Double](repeating: 0, count: end - start)
                for (k, w) in vips.weights.enumerated() { row[vips.start - start + k] += w }
                for (k, w) in ours.weights.enumerated() { row[ours.start - start + k] -= w }
                rows.append((start, row))
            }
            let taps = rows.map(\.weights.count).max() ?? 0
            self.taps = taps
            starts = rows.map { min($0.start, n - taps) }
            var weights = [Float](repeating: 0, count: m * taps)
            for (i, row) in rows.enumerated() {
                let shift = row.start - starts[i]
                for (k, w) in row.weights.enumerated() { weights[i * taps + shift + k] = Float(w) }
            }
            self.weights = weights
        }

        /// Σ over output samples of (vips' − ours)² for one source line of `starts`' length.
        func sumOfSquares(_ line: [Float]) -> Double {
            var sum: Float = 0
            line.withUnsafeBufferPointer { src in
                weights.withUnsafeBufferPointer { w in
                    for i in 0..<starts.count {
                        let s = src.baseAddress! + starts[i]
                        let wi = w.baseAddress! + i * taps
                        var d: Float = 0
                        for k in 0..<taps { d += wi[k] * s[k] }
                        sum += d * d
                    }
                }
            }
            return Double(sum)
        }

        /// Lanczos-3 widened by `scale`, centred at `centre`, over the source samples within its support
        /// (truncated at the line's ends and renormalised).
        static func lanczos(_ n: Int, centre: Double, scale: Double) -> (start: Int, weights: [Double]) {
            let support = ResampleWeights.radius * scale
            let low = max(Int((centre - support).rounded(.up)), 0)
            let high = min(Int((centre + support).rounded(.down)), n - 1)
            guard high >= low else { return (min(max(Int(centre.rounded()), 0), n - 1), [1]) }
            var weights = (low...high).map { ResampleWeights.lanczos3((Double($0) - centre) / scale) }
            let total = weights.reduce(0, +)
            if total != 0 { weights = weights.map { $0 / total } }
            return (low, weights)
        }
    }
}

extension SourceEncoderSettings {
    /// How many Klein steps a detailed near-size thumbnail goes below its row's `detailedStep` by vips'
    /// resampling loss (`VipsResamplingLoss`, decision 072): `stepsPerRMS` a luma step of the estimate over
    /// `threshold`, at most `maxSteps`; none without an estimate.
    struct ResamplingLossStep: Sendable, Equatable {
        let threshold: Double
        let stepsPerRMS: Double
        let maxSteps: Double

        /// HEIC's and AVIF's, fitted on the bench's china and v20's three china crops: none up to 0.7, one step
        /// a luma step over it, at most 3. The bench's china (estimate 3.85: vips' thumbnail 13.6 below ours
        /// before either is encoded) goes to Klein E − 4, +2.50 over vips' at 0.907× its two files' bytes (was
        /// +3.84 at 0.934×; AVIF +2.07 at 0.903×); v20's 620×427 (1.70) to E − 2 (+0.42, AVIF +0.62; E − 3 was
        /// −0.11); its 600×427 q50 (0.50) stays at E − 1 (+0.19; E − 2 was −0.18).
        static let heifNearSizeThumbnails = ResamplingLossStep(threshold: 0.7, stepsPerRMS: 1, maxSteps: 3)

        /// The steps below the row's for an estimate of `rms` (nil: none made).
        func steps(rms: Double?) -> Double {
            guard let rms else { return 0 }
            return min(max((rms - threshold) * stepsPerRMS, 0), maxSteps)
        }

        /// The thumbnail's tables: Klein's, one table, at the quality in force plus `detailedStep` less the
        /// steps `preview` (the original's pixels, as displayed) and the thumbnail's size call for.
        func tables(_ inForce: Int, detailedStep: Double, preview: PixelBuffer, thumbnail: (width: Int, height: Int))
            -> QuantizationTables
        {
            let rms = VipsResamplingLoss.rmsDifference(preview, thumbnail: thumbnail)
            return SourceEncoderSettings.klein(inForce, step: detailedStep - steps(rms: rms))
        }
    }
}
