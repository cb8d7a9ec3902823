import CResampleKernels
import Testing

/// The resampler's C loops: the AVX2+FMA versions give what the portable ones give (to the FMA's
/// single rounding; exactly for widening and rounding to bytes), so a CPU without AVX2 makes the
/// same derivatives.
@Suite struct ResampleKernelsTests {
    /// Deterministic pseudo-random bytes.
    static func bytes(_ count: Int, seed: UInt64) -> [UInt8] {
        var state = seed
        return (0..<count).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt8(truncatingIfNeeded: state >> 33)
        }
    }

    /// Lanczos-like weights: some negative, summing to 1.
    static func weights(_ taps: Int) -> [Float] {
        let raw = (0..<taps).map { Float(($0 * 7) % 11) - 2.5 }
        let sum = raw.reduce(0, +)
        return raw.map { $0 / sum }
    }

    static func close(_ a: [Float], _ b: [Float]) -> Bool {
        zip(a, b).allSatisfy { abs($0 - $1) <= 1e-3 * max(1, abs($0)) }
    }

    /// Both versions, or the portable one twice on a CPU without AVX2.
    static let levels: [Int32] = [0, gd_resample_has_avx2()]

    @Test(arguments: [(19, 24_112), (7, 37), (1, 5), (13, 31)])
    func verticalPass_Agrees_OverBytesAndFloats(taps: Int, count: Int) {
        let rows = (0..<taps).map { Self.bytes(count, seed: UInt64($0 + 1)) }
        let floatRows = rows.map { $0.map(Float.init) }
        let w = Self.weights(taps)
        // The C loops take one pointer per row.
        let bytePointers: [UnsafePointer<UInt8>?] = rows.map { row in
            let copy = UnsafeMutablePointer<UInt8>.allocate(capacity: count)
            copy.initialize(from: row, count: count)
            return UnsafePointer(copy)
        }
        let floatPointers: [UnsafePointer<Float>?] = floatRows.map { row in
            let copy = UnsafeMutablePointer<Float>.allocate(capacity: count)
            copy.initialize(from: row, count: count)
            return UnsafePointer(copy)
        }
        defer {
            for row in bytePointers { row?.deallocate() }
            for row in floatPointers { row?.deallocate() }
        }
        var results: [[Float]] = []
        for level in Self.levels {
            var fromBytes = [Float](repeating: 0, count: count)
            var fromFloats = [Float](repeating: 0, count: count)
            gd_combine_u8(bytePointers, w, Int32(taps), count, &fromBytes, level)
            gd_combine_f32(floatPointers, w, Int32(taps), count, &fromFloats, level)
            #expect(fromBytes == fromFloats)  // widening is exact: the same sums, in the same order
            results.append(fromBytes)
        }
        let expected = (0..<count).map { x in (0..<taps).reduce(Float(0)) { $0 + w[$1] * floatRows[$1][x] } }
        #expect(results.allSatisfy { Self.close($0, expected) })
    }

    @Test(arguments: [(4, 19, 101), (4, 7, 2), (4, 1, 9), (1, 19, 33)])
    func horizontalPass_Agrees(channels: Int, taps: Int, width: Int) {
        let sourceWidth = 3 * width + taps
        let source = Self.bytes(sourceWidth * channels, seed: 9).map(Float.init)
        let starts = (0..<width).map { min(3 * $0, sourceWidth - taps) }
        let w = (0..<width).flatMap { _ in Self.weights(taps) }
        var results: [[Float]] = []
        for level in Self.levels {
            var target = [Float](repeating: 0, count: width * channels)
            if channels == 4 {
                gd_resample_row4(source, starts, w, Int32(taps), width, &target, level)
            } else {
                gd_resample_row1(source, starts, w, Int32(taps), width, &target, level)
            }
            results.append(target)
        }
        let expected = (0..<width * channels).map { index in
            let (i, c) = index.quotientAndRemainder(dividingBy: channels)
            return (0..<taps).reduce(Float(0)) { $0 + w[i * taps + $1] * source[(starts[i] + $1) * channels + c] }
        }
        #expect(results.allSatisfy { Self.close($0, expected) })
    }

    /// RGB to RGBX (255 in the fourth byte), the same in both versions at every length, the
    /// shuffled blocks' and the tail's pixels alike.
    @Test func rgbToRGBX_CopiesEachPixelAndAddsOpaque() {
        let source = Self.bytes(3 * 101, seed: 5)
        for pixels in [0, 1, 2, 5, 6, 7, 10, 64, 101] {
            var expected: [UInt8] = []
            for p in 0..<pixels { expected += [source[3 * p], source[3 * p + 1], source[3 * p + 2], 255] }
            for level in Self.levels {
                var target = [UInt8](repeating: 7, count: 4 * pixels + 4)
                gd_rgb_to_rgbx(source, pixels, &target, level)
                #expect(Array(target.prefix(4 * pixels)) == expected)
                #expect(target.suffix(4) == [7, 7, 7, 7], "nothing written past the last pixel")
            }
        }
    }

    /// Rounding to bytes: ties to even, clamped at 0 and 255, the same in both versions.
    @Test func quantizeAndWiden_AreExact() {
        let values: [Float] = (0..<300).map { Float($0 - 20) * 0.97 } + [2.5, 3.5, -0.5, 254.5, 255.5, 1e9, -1e9]
        let expected = values.map { UInt8(min(max($0, 0), 255).rounded(.toNearestOrEven)) }
        let source = Self.bytes(1_001, seed: 3)
        for level in Self.levels {
            var bytes = [UInt8](repeating: 0, count: values.count)
            gd_quantize(values, values.count, &bytes, level)
            #expect(bytes == expected)
            var floats = [Float](repeating: 0, count: source.count)
            gd_widen(source, source.count, &floats, level)
            #expect(floats == source.map(Float.init))
        }
    }
}
