import CJPEGShim
import Testing

/// The coefficient path's loops (jpeg_simd.c, jpeg_fdct_simd.c): the AVX2 forms give exactly what
/// the portable ones give, and the portable ones are libjpeg's arithmetic (jccolor.c's tables,
/// jcsample.c's biased average, jfdctint.c), on random and extreme rows of every edge width and
/// on random and extreme blocks; so a CPU without AVX2 writes the same files.
@Suite struct CoefficientKernelsTests {
    /// Both forms, or the portable one twice on a CPU without AVX2.
    static let levels: [Int32] = [0, gd_coefficients_has_avx2()]

    /// Deterministic pseudo-random bytes.
    static func bytes(_ count: Int, seed: UInt64) -> [UInt8] {
        var state = seed
        return (0..<count).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt8(truncatingIfNeeded: state >> 33)
        }
    }

    /// Random rows, and rows of the extremes: all 0, all 255, 0/255 alternating, one channel at 255.
    static func rows(_ count: Int, seed: UInt64) -> [[UInt8]] {
        [
            bytes(count, seed: seed), [UInt8](repeating: 0, count: count), [UInt8](repeating: 255, count: count),
            (0..<count).map { $0 % 2 == 0 ? 0 : 255 }, (0..<count).map { $0 % 3 == 0 ? 255 : 0 },
            (0..<count).map { $0 % 3 == 2 ? 255 : 0 }, (0..<count).map { $0 % 7 < 3 ? 255 : 0 },
        ]
    }

    /// jccolor.c rgb_ycc_start's tables and rgb_ycc_convert's sums.
    static let yccTable: [Int32] = {
        func fix(_ x: Double) -> Int32 { Int32(x * 65_536 + 0.5) }
        var t = [Int32](repeating: 0, count: 8 * 256)
        for i in 0..<256 {
            let v = Int32(i)
            t[i] = fix(0.299) * v
            t[i + 256] = fix(0.587) * v
            t[i + 512] = fix(0.114) * v + 32_768
            t[i + 768] = -fix(0.16874) * v
            t[i + 1024] = -fix(0.33126) * v
            t[i + 1280] = fix(0.5) * v + (128 << 16) + 32_767
            t[i + 1536] = -fix(0.41869) * v
            t[i + 1792] = -fix(0.08131) * v
        }
        return t
    }()

    static func libjpegYCC(_ r: UInt8, _ g: UInt8, _ b: UInt8) -> (UInt8, UInt8, UInt8) {
        let t = yccTable
        let (r, g, b) = (Int(r), Int(g), Int(b))
        let y = (t[r] + t[g + 256] + t[b + 512]) >> 16
        let cb = (t[r + 768] + t[g + 1024] + t[b + 1280]) >> 16
        let cr = (t[r + 1280] + t[g + 1536] + t[b + 1792]) >> 16
        return (UInt8(y), UInt8(cb), UInt8(cr))
    }

    @Test(arguments: [3, 4])
    func rgbToYCbCr_IsJccolors_InBothForms(pixelBytes: Int) {
        for width in Array(1...33) + [64, 257, 1_920] {
            for (index, pixels) in Self.rows(width * pixelBytes, seed: UInt64(width * 31 + pixelBytes)).enumerated() {
                var expected = ([UInt8](), [UInt8](), [UInt8]())
                for x in 0..<width {
                    let p = x * pixelBytes
                    let (y, cb, cr) = Self.libjpegYCC(pixels[p], pixels[p + 1], pixels[p + 2])
                    expected.0.append(y)
                    expected.1.append(cb)
                    expected.2.append(cr)
                }
                for level in Self.levels {
                    var y = [UInt8](repeating: 0, count: width)
                    var cb = y
                    var cr = y
                    gd_rgb_ycc_row(pixels, Int32(pixelBytes), UInt32(width), &y, &cb, &cr, level)
                    #expect(y == expected.0, "Y, width \(width), row \(index), level \(level)")
                    #expect(cb == expected.1, "Cb, width \(width), row \(index), level \(level)")
                    #expect(cr == expected.2, "Cr, width \(width), row \(index), level \(level)")
                }
            }
        }
    }

    @Test func everyColour_ConvertsAlike() {
        // All 2^24 colours would be slow in a debug build: every R and B with G on a stride, 4 bytes a pixel.
        var pixels: [UInt8] = []
        pixels.reserveCapacity(256 * 16 * 256 * 4)
        for r in 0..<256 {
            for g in stride(from: 0, to: 256, by: 17) {
                for b in 0..<256 {
                    pixels.append(UInt8(r))
                    pixels.append(UInt8(g))
                    pixels.append(UInt8(b))
                    pixels.append(0)
                }
            }
        }
        let count = pixels.count / 4
        var outputs: [[UInt8]] = []
        for level in Self.levels {
            var y = [UInt8](repeating: 0, count: count)
            var cb = y
            var cr = y
            gd_rgb_ycc_row(pixels, 4, UInt32(count), &y, &cb, &cr, level)
            outputs.append(y + cb + cr)
        }
        // The first differing sample, not two million of them, on a failure.
        let (first, last) = (outputs[0], outputs[outputs.count - 1])
        let mismatch = first.indices.first { first[$0] != last[$0] }
        #expect(mismatch == nil, "first difference at \(mismatch ?? -1)")
        let probe = 12_345 * 4
        let (y, _, _) = Self.libjpegYCC(pixels[probe], pixels[probe + 1], pixels[probe + 2])
        #expect(outputs[0][12_345] == y)
    }

    @Test func downsample_IsJcsamples_InBothForms() {
        for count in Array(1...33) + [64, 95, 960] {
            let tops = Self.rows(2 * count, seed: UInt64(count))
            let bottoms = Self.rows(2 * count, seed: UInt64(count + 1_000)).reversed()
            for (index, (top, bottom)) in zip(tops, bottoms).enumerated() {
                let expected = (0..<count).map { x in
                    let sum = Int(top[2 * x]) + Int(top[2 * x + 1]) + Int(bottom[2 * x]) + Int(bottom[2 * x + 1])
                    return UInt8((sum + (x % 2 == 0 ? 1 : 2)) >> 2)
                }
                for level in Self.levels {
                    var out = [UInt8](repeating: 0, count: count)
                    gd_downsample_h2v2_row(top, bottom, count, &out, level)
                    #expect(out == expected, "count \(count), rows \(index), level \(level)")
                }
            }
        }
    }

    /// Random blocks of centred samples, and the extremes: flat -128 and 127, checkerboards,
    /// stripes, and one corner at an extreme.
    static func blocks() -> [[Int16]] {
        var result: [[Int16]] = [
            [Int16](repeating: -128, count: 64), [Int16](repeating: 127, count: 64),
            (0..<64).map { ($0 / 8 + $0 % 8) % 2 == 0 ? -128 : 127 }, (0..<64).map { $0 % 2 == 0 ? 127 : -128 },
            (0..<64).map { ($0 / 8) % 2 == 0 ? -128 : 127 }, (0..<64).map { $0 == 0 ? 127 : -128 },
            (0..<64).map { $0 == 63 ? -128 : 127 }, (0..<64).map { $0 % 8 < 4 ? -128 : 127 },
        ]
        for seed in 0..<2_000 {
            let raw = bytes(64, seed: UInt64(seed) + 77)
            // Full-range noise, and low-amplitude noise on a level (a flat photo's blocks).
            result.append(raw.map { Int16($0) - 128 })
            result.append(raw.map { Int16(seed % 200 - 100) + Int16($0 % 5) - 2 })
        }
        return result
    }

    @Test func fdct_BothForms_GiveTheSameCoefficients() {
        var checked = 0
        for block in Self.blocks() {
            var reference = block
            reference.withUnsafeMutableBufferPointer { gd_fdct_islow($0.baseAddress) }
            for level in Self.levels {
                var transformed = block
                transformed.withUnsafeMutableBufferPointer { gd_fdct_islow_dispatch($0.baseAddress, level) }
                #expect(transformed == reference, "block \(block), level \(level)")
                checked += 1
            }
        }
        #expect(checked == 2 * Self.blocks().count)
        // From sample rows (centred by 128 on the way in), at a column inside wider rows.
        for (index, block) in Self.blocks().enumerated() {
            let column = index % 5 * 8
            let rows = (0..<8).map { y in
                (0..<48).map { x in
                    x >= column && x < column + 8 ? UInt8(block[y * 8 + x - column] + 128) : UInt8((x * 37 + y) & 255)
                }
            }
            var reference = block
            reference.withUnsafeMutableBufferPointer { gd_fdct_islow($0.baseAddress) }
            let pointers = rows.map { row in
                let copy = UnsafeMutablePointer<UInt8>.allocate(capacity: row.count)
                copy.initialize(from: row, count: row.count)
                return UnsafePointer(copy)
            }
            defer { for pointer in pointers { pointer.deallocate() } }
            for level in Self.levels {
                var transformed = [Int16](repeating: 0, count: 64)
                pointers.map { Optional($0) }.withUnsafeBufferPointer { rowPointers in
                    transformed.withUnsafeMutableBufferPointer {
                        gd_fdct_islow_samples(rowPointers.baseAddress, column, $0.baseAddress, level)
                    }
                }
                #expect(transformed == reference, "samples block \(index), level \(level)")
            }
        }
        // The flat block's DC is 8 × 8 × the level (outputs scaled by 8), nothing else.
        var flat = [Int16](repeating: 127, count: 64)
        flat.withUnsafeMutableBufferPointer { gd_fdct_islow_dispatch($0.baseAddress, Self.levels.last!) }
        #expect(flat[0] == 127 * 64 && flat.dropFirst().allSatisfy { $0 == 0 })
    }
}
