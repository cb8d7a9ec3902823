import CJPEG
import CJPEGShim
import Foundation
import Testing

@testable import Imaging

/// The coefficient path's chroma sharpening (`JPEGEncoder.encode`'s `chromaSharpening`,
/// docs/decisions/071-chroma-sharpened-for-the-decoders-upsampling.md): each downsampled chroma sample h
/// becomes h + k (4h − its four neighbours) / 8 before its DCT, the neighbours below a strip's last row from
/// the next strip. Generated images only.
@Suite struct ChromaSharpeningTests {
    /// The shim's strength in 1/256: k × 256 rounded.
    static func k256(_ k: Float) -> Int { Int((k * 256).rounded()) }

    /// A YCbCr image (3 channels) of a scene's colours: gradients, an edge, texture and noise.
    static func ycbcr(width: Int, height: Int, seed: UInt64 = 11) -> PixelBuffer {
        let rgb = JPEGQuantizerTests.scene(width: width, height: height, seed: seed)
        var image = PixelBuffer(width: width, height: height, channels: 3)
        for pixel in 0..<(width * height) {
            let (r, g, b) = (
                Double(rgb.bytes[pixel * 4]), Double(rgb.bytes[pixel * 4 + 1]), Double(rgb.bytes[pixel * 4 + 2])
            )
            let values = [
                0.299 * r + 0.587 * g + 0.114 * b, 128 - 0.168736 * r - 0.331264 * g + 0.5 * b,
                128 + 0.5 * r - 0.418688 * g - 0.081312 * b,
            ]
            for c in 0..<3 { image.bytes[pixel * 3 + c] = UInt8(max(0, min(255, values[c].rounded()))) }
        }
        return image
    }

    /// What the shim makes of channel `c` at 4:2:0 for a width that is a multiple of 16 (no padded columns):
    /// jcsample.c's box (bias 1, 2, 1, 2, … along the row; an odd height's last row repeated), then each sample
    /// h + (k256 (4h − up − down − left − right) + 1024) >> 11, clamped, the plane's edges replicated.
    static func sharpenedChroma(_ image: PixelBuffer, channel c: Int, k256: Int) -> [[Int]] {
        let (width, height) = (image.width, image.height)
        func sample(_ x: Int, _ y: Int) -> Int { Int(image.bytes[(min(y, height - 1) * width + x) * 3 + c]) }
        let (cw, ch) = (width / 2, (height + 1) / 2)
        let box = (0..<ch).map { y in
            (0..<cw).map { x in
                (sample(2 * x, 2 * y) + sample(2 * x + 1, 2 * y) + sample(2 * x, 2 * y + 1)
                    + sample(2 * x + 1, 2 * y + 1)
                    + (x & 1 == 1 ? 2 : 1)) >> 2
            }
        }
        return (0..<ch).map { y in
            (0..<cw).map { x in
                let h = box[y][x]
                let around =
                    box[max(y - 1, 0)][x] + box[min(y + 1, ch - 1)][x] + box[y][max(x - 1, 0)]
                    + box[y][min(x + 1, cw - 1)]
                return max(0, min(255, h + ((k256 * (4 * h - around) + 1024) >> 11)))
            }
        }
    }

    /// One encode of a YCbCr image, progressive on the pipeline's script and libjpeg's tables at Q80.
    static func encode(_ image: PixelBuffer, quantizer: JPEGQuantizer, sharpening: Float) throws -> [UInt8] {
        try JPEGEncoder.encode(
            image, inputColorSpace: JCS_YCbCr, jpegColorSpace: JCS_YCbCr, quality: 80, quantTable: nil,
            scans: JPEGEncoder.colorScans, subsampleChroma: true, writeAdobe: false, quantizer: quantizer,
            chromaSharpening: sharpening, iccProfile: nil)
    }

    @Test(arguments: JPEGQuantizerTests.Layout.allCases)
    func zeroStrength_WritesTodaysBytes(layout: JPEGQuantizerTests.Layout) throws {
        // A k under half a 256th rounds to 0: the coefficient path (it takes any k ≠ 0) with libjpeg's box as it
        // is writes libjpeg's own bytes (k = 0, libjpeg's compressor); so does any k where nothing is
        // downsampled (4:4:4, gray, CMYK).
        for size in JPEGQuantizerTests.oddSizes + [(width: 96, height: 80)] {
            let image = JPEGQuantizerTests.image(for: layout, width: size.width, height: size.height)
            let libjpeg = try Self.encodeLayout(image, layout, sharpening: 0)
            var strengths: [Float] = [0.001]
            if [.fullChroma, .gray, .grayBaseline, .cmyk].contains(layout) { strengths.append(0.75) }
            for k in strengths {
                let same = try Self.encodeLayout(image, layout, sharpening: k) == libjpeg
                #expect(same, "\(layout) \(size.width)×\(size.height) k \(k)")
            }
        }
    }

    /// `JPEGQuantizerTests.encode`'s layouts with a chroma sharpening (libjpeg's quantizer: the path rounds).
    static func encodeLayout(_ image: PixelBuffer, _ layout: JPEGQuantizerTests.Layout, sharpening: Float) throws
        -> [UInt8]
    {
        let gray = image.channels == 1
        switch layout {
        case .progressive, .gray:
            return try JPEGEncoder.encode(image, quality: 80, chromaSharpening: sharpening, iccProfile: nil)
        case .baseline, .grayBaseline:
            return try JPEGEncoder.encode(
                image, inputColorSpace: gray ? JCS_GRAYSCALE : JCS_EXT_RGBX,
                jpegColorSpace: gray ? JCS_GRAYSCALE : JCS_YCbCr, quality: 80, quantTable: nil, scans: nil,
                subsampleChroma: true, writeAdobe: false, chromaSharpening: sharpening, iccProfile: nil)
        case .fullChroma:
            return try JPEGEncoder.encode(
                image, inputColorSpace: JCS_EXT_RGBX, jpegColorSpace: JCS_YCbCr, quality: 80, quantTable: nil,
                scans: JPEGEncoder.colorScans, subsampleChroma: false, writeAdobe: false,
                chromaSharpening: sharpening, iccProfile: nil)
        case .cmyk:
            return try JPEGEncoder.encode(
                image, inputColorSpace: JCS_CMYK, jpegColorSpace: JCS_CMYK, quality: 80, quantTable: nil, scans: nil,
                subsampleChroma: false, writeAdobe: true, chromaSharpening: sharpening, iccProfile: nil)
        }
    }

    @Test func sharpenedChroma_IsTheModelsAcrossStrips() throws {
        // The sharpened file is the one libjpeg writes from the model's chroma repeated 2×2 (its box returns
        // each such block exactly): every strip's first and last rows took their neighbours from the strips
        // around them, and the image's edges their own (one strip; five; an odd height whose last strip has
        // three chroma rows; two rows; a last strip of nine rows).
        for (width, height) in [(32, 16), (48, 80), (32, 37), (16, 2), (64, 17)] {
            let image = Self.ycbcr(width: width, height: height)
            for k: Float in [0.5, 1.5, -0.5] {
                let sharpened = try Self.encode(image, quantizer: .rounding, sharpening: k)
                var model = image
                for c in 1...2 {
                    let chroma = Self.sharpenedChroma(image, channel: c, k256: Self.k256(k))
                    for y in 0..<height {
                        for x in 0..<width { model.bytes[(y * width + x) * 3 + c] = UInt8(chroma[y / 2][x / 2]) }
                    }
                }
                let expected = try Self.encode(model, quantizer: .libjpeg, sharpening: 0)
                let (matches, plain) = (
                    sharpened == expected, try Self.encode(image, quantizer: .rounding, sharpening: 0)
                )
                #expect(matches, "\(width)×\(height) k \(k)")
                #expect(sharpened.count != plain.count || sharpened != plain, "\(width)×\(height) k \(k): no change")
            }
        }
    }

    @Test func sharpenedEncode_DecodesWithMoreChromaContrastAcrossAnEdge() throws {
        // A red half beside a blue one, the edge between two chroma samples: box down, then the decoder's
        // triangle up, spread the step over four pixels; the sharpened chroma leaves a steeper one.
        let (width, height) = (64, 32)
        var image = PixelBuffer(width: width, height: height, channels: 4)
        for y in 0..<height {
            for x in 0..<width {
                let i = (y * width + x) * 4
                (image.bytes[i], image.bytes[i + 1], image.bytes[i + 2], image.bytes[i + 3]) =
                    x < 32 ? (190, 70, 60, 255) : (60, 80, 190, 255)
            }
        }
        func crStep(_ k: Float) throws -> Double {
            let pixels = try TestImages.decode(
                try JPEGEncoder.encode(image, quality: 95, chromaSharpening: k, iccProfile: nil))
            func cr(_ x: Int) -> Double {
                (0..<height).reduce(0.0) { sum, y in
                    let i = (y * width + x) * 4
                    return sum + 0.5 * Double(pixels.bytes[i]) - 0.418688 * Double(pixels.bytes[i + 1]) - 0.081312
                        * Double(pixels.bytes[i + 2])
                } / Double(height)
            }
            return cr(31) - cr(32)
        }
        let (plain, sharpened) = (try crStep(0), try crStep(0.75))
        #expect(plain > 20, "\(plain)")
        #expect(sharpened > plain * 1.1, "sharpened \(sharpened), plain \(plain)")
    }

    @Test func sharpeningWithTheZeroBiasQuantizer_IsAClearError() throws {
        let image = JPEGQuantizerTests.scene(width: 32, height: 32)
        #expect(throws: ImageError.self) {
            try JPEGEncoder.encode(image, quality: 80, quantizer: .zeroBias, chromaSharpening: 0.5, iccProfile: nil)
        }
        #expect(throws: ImageError.self) {
            try JPEGEncoder.encode(image, quality: 80, chromaSharpening: 9, iccProfile: nil)
        }
    }
}
