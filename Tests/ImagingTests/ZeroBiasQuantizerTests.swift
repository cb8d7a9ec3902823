import CJPEG
import CJPEGShim
import Foundation
import Testing

@testable import Imaging

/// The zero-bias quantizer (`JPEGQuantizer.zeroBias`, docs/decisions/070-adaptive-zero-bias-quantization.md):
/// rounding with a dead zone scaled per block by its masking. Generated images only.
@Suite struct ZeroBiasQuantizerTests {
    typealias Layout = JPEGQuantizerTests.Layout

    /// `JPEGQuantizerTests.encode`'s layouts with a dead zone.
    static func encode(
        _ image: PixelBuffer, _ layout: Layout, quantizer: JPEGQuantizer, zeroBias: JPEGQuantizer.ZeroBias?,
        quality: Int = 80
    ) throws -> [UInt8] {
        let gray = image.channels == 1
        switch layout {
        case .progressive, .gray:
            return try JPEGEncoder.encode(
                image, quality: quality, quantizer: quantizer, zeroBias: zeroBias, iccProfile: nil)
        case .baseline, .grayBaseline:
            return try JPEGEncoder.encode(
                image, inputColorSpace: gray ? JCS_GRAYSCALE : JCS_EXT_RGBX,
                jpegColorSpace: gray ? JCS_GRAYSCALE : JCS_YCbCr, quality: quality, quantTable: nil, scans: nil,
                subsampleChroma: true, writeAdobe: false, quantizer: quantizer, zeroBias: zeroBias, iccProfile: nil)
        case .fullChroma:
            return try JPEGEncoder.encode(
                image, inputColorSpace: JCS_EXT_RGBX, jpegColorSpace: JCS_YCbCr, quality: quality,
                quantTable: nil, scans: JPEGEncoder.colorScans, subsampleChroma: false, writeAdobe: false,
                quantizer: quantizer, zeroBias: zeroBias, iccProfile: nil)
        case .cmyk:
            return try JPEGEncoder.encode(
                image, inputColorSpace: JCS_CMYK, jpegColorSpace: JCS_CMYK, quality: quality, quantTable: nil,
                scans: nil, subsampleChroma: false, writeAdobe: true, quantizer: quantizer, zeroBias: zeroBias,
                iccProfile: nil)
        }
    }

    /// Left half a smooth ramp with faint noise (little AC, of every size), right half a strong texture
    /// (much AC), in all three colour channels.
    static func halves(width: Int = 128, height: Int = 64) -> PixelBuffer {
        var image = PixelBuffer(width: width, height: height, channels: 4)
        var state: UInt64 = 5
        for y in 0..<height {
            for x in 0..<width {
                let smooth = x < width / 2
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                let ripple = smooth ? (Double(Int(state >> 61)) - 3.5) * 0.7 : 0
                let texture =
                    smooth ? 0 : 45 * sin(Double(x) * 0.9) * cos(Double(y) * 0.7) + 25 * sin(Double(x * y) * 0.05)
                let base = 90 + Double(x) * 0.4 + Double(y) * 0.3 + ripple + texture
                let index = (y * width + x) * 4
                for c in 0..<3 { image.bytes[index + c] = UInt8(max(0, min(255, (base + Double(c) * 12).rounded()))) }
                image.bytes[index + 3] = 255
            }
        }
        return image
    }

    /// Mean absolute difference of the two decodes over columns `columns` (first three channels).
    static func difference(_ a: PixelBuffer, _ b: PixelBuffer, columns: Range<Int>) -> Double {
        var sum = 0.0
        for y in 0..<a.height {
            for x in columns {
                for c in 0..<3 {
                    let i = (y * a.width + x) * 4 + c
                    sum += abs(Double(a.bytes[i]) - Double(b.bytes[i]))
                }
            }
        }
        return sum / Double(a.height * columns.count * 3)
    }

    @Test(arguments: Layout.allCases)
    func zeroStrength_WritesRoundingsBytes(layout: Layout) throws {
        // No dead zone: the same coefficients as rounding, so libjpeg's own bytes, whatever the masking.
        for size in JPEGQuantizerTests.oddSizes + [(width: 96, height: 80)] {
            let image = JPEGQuantizerTests.image(for: layout, width: size.width, height: size.height)
            for quality in [50, 80, 95] {
                let rounding = try Self.encode(image, layout, quantizer: .rounding, zeroBias: nil, quality: quality)
                for masking: Float in [2, -2] {
                    let none = JPEGQuantizer.ZeroBias(luma: 0, chroma: 0, masking: masking)
                    let ours = try Self.encode(image, layout, quantizer: .zeroBias, zeroBias: none, quality: quality)
                    #expect(ours == rounding, "\(layout) \(size.width)×\(size.height) Q\(quality) masking \(masking)")
                }
            }
        }
    }

    @Test(arguments: Layout.allCases)
    func zeroBias_DecodesNearTheImage_AtEverySize(layout: Layout) throws {
        for size in JPEGQuantizerTests.oddSizes {
            let image = JPEGQuantizerTests.image(for: layout, width: size.width, height: size.height)
            let jpeg = try Self.encode(image, layout, quantizer: .zeroBias, zeroBias: .standard)
            let info = try ImageProbe.probe(bytes: jpeg)
            #expect(info.width == size.width && info.height == size.height)
            if layout == .cmyk { continue }  // the decode helper reads RGB or gray
            let error = JPEGQuantizerTests.meanError(try TestImages.decode(jpeg), image)
            let reference = JPEGQuantizerTests.meanError(
                try TestImages.decode(try Self.encode(image, layout, quantizer: .rounding, zeroBias: nil)), image)
            #expect(error <= reference * 1.25 + 1, "\(layout) \(size.width)×\(size.height): \(error) vs \(reference)")
        }
    }

    @Test func maskedCurve_ZeroesTheBusyHalf_InvertedCurve_TheSmoothHalf() throws {
        // The dead zone follows the block's masking: with a positive scale the textured half loses
        // coefficients and the smooth half few; with a negative one (the smooth-block curve) the
        // smooth half changes more and the textured half less than with the positive one (the
        // textured half has far more coefficients just over a step's half, so it still changes most).
        // Both save bytes.
        let image = Self.halves()
        let rounding = try Self.encode(image, .progressive, quantizer: .rounding, zeroBias: nil)
        let roundingPixels = try TestImages.decode(rounding)
        let (smooth, busy) = (0..<(image.width / 2 - 8), (image.width / 2 + 8)..<image.width)
        var changes: [Float: (smooth: Double, busy: Double)] = [:]
        for masking: Float in [2, -2] {
            let zeroBias = JPEGQuantizer.ZeroBias(luma: 0.45, chroma: 0.45, masking: masking)
            let jpeg = try Self.encode(image, .progressive, quantizer: .zeroBias, zeroBias: zeroBias)
            #expect(jpeg.count < rounding.count, "masking \(masking): \(jpeg.count) vs \(rounding.count)")
            let pixels = try TestImages.decode(jpeg)
            changes[masking] = (
                Self.difference(pixels, roundingPixels, columns: smooth),
                Self.difference(pixels, roundingPixels, columns: busy)
            )
        }
        let masked = try #require(changes[2])
        let inverted = try #require(changes[-2])
        #expect(masked.busy > 2 * masked.smooth, "masked: \(masked)")
        #expect(inverted.smooth > masked.smooth, "inverted: \(inverted), masked: \(masked)")
        #expect(masked.busy > 2 * inverted.busy, "inverted: \(inverted), masked: \(masked)")
    }

    @Test func streamEncoder_WritesTheOneShotBytes() throws {
        for gray in [false, true] {
            let image = JPEGQuantizerTests.scene(width: 45, height: 37, gray: gray)
            let stream = try JPEGStreamEncoder(
                width: image.width, height: image.height, channels: image.channels, quality: 80,
                quantizer: .zeroBias, iccProfile: nil)
            try stream.write(image)
            let oneShot = try JPEGEncoder.encode(image, quality: 80, quantizer: .zeroBias, iccProfile: nil)
            #expect(try stream.finish() == oneShot, "gray \(gray)")
            let rounding = try JPEGEncoder.encode(image, quality: 80, quantizer: .rounding, iccProfile: nil)
            #expect(oneShot != rounding, "gray \(gray): the standard dead zone changed nothing")
        }
    }
}
