import CJPEG
import CJPEGShim
import Foundation
import Testing

@testable import Imaging

/// The coefficient path (`JPEGQuantizer.rounding` and `.trellis`): its DCT and conversions
/// against libjpeg's, and trellis output that every decoder reads. Generated images only.
@Suite struct JPEGQuantizerTests {
    /// Sizes that leave partial blocks, partial MCUs and one-pixel edges.
    static let oddSizes: [(width: Int, height: Int)] = [(1, 1), (7, 9), (17, 3), (33, 47), (64, 64)]

    /// A photo-like test image: gradients, an edge, a sine texture and a little noise.
    static func scene(width: Int, height: Int, gray: Bool = false, seed: UInt64 = 7) -> PixelBuffer {
        var state = seed
        let channels = gray ? 1 : 4
        var image = PixelBuffer(width: width, height: height, channels: channels)
        for y in 0..<height {
            for x in 0..<width {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                let noise = Double(Int(state >> 60)) - 7.5
                let fx = Double(x) / Double(max(width - 1, 1))
                let fy = Double(y) / Double(max(height - 1, 1))
                let texture = 30 * sin(Double(x) * 0.7) * cos(Double(y) * 0.4)
                let edge: Double = x > width / 2 ? 40 : 0
                let values = [
                    40 + 150 * fx + texture + edge + noise, 60 + 120 * fy - texture / 2 + noise,
                    200 - 140 * fx * fy + edge / 2 + noise,
                ]
                let index = (y * width + x) * channels
                if gray {
                    image.bytes[index] = clamp(values[0] * 0.6 + values[1] * 0.4)
                } else {
                    for c in 0..<3 { image.bytes[index + c] = clamp(values[c]) }
                    image.bytes[index + 3] = 255
                }
            }
        }
        return image
    }

    private static func clamp(_ value: Double) -> UInt8 { UInt8(max(0, min(255, value.rounded()))) }

    /// Mean absolute difference per sample over the first three (or one) channels.
    static func meanError(_ a: PixelBuffer, _ b: PixelBuffer) -> Double {
        precondition(a.width == b.width && a.height == b.height && a.channels == b.channels)
        let used = a.channels == 1 ? 1 : 3
        var sum = 0.0
        for pixel in 0..<(a.width * a.height) {
            for c in 0..<used {
                sum += abs(Double(a.bytes[pixel * a.channels + c]) - Double(b.bytes[pixel * b.channels + c]))
            }
        }
        return sum / Double(a.width * a.height * used)
    }

    /// One encode in the form the tests compare: colour or gray, progressive (the pipeline's
    /// script and tables) or baseline (libjpeg's tables), 4:2:0 or 4:4:4, or CMYK.
    enum Layout: CaseIterable {
        case progressive, baseline, fullChroma, gray, grayBaseline, cmyk
    }

    static func encode(_ image: PixelBuffer, _ layout: Layout, quantizer: JPEGQuantizer, quality: Int = 80) throws
        -> [UInt8]
    {
        switch layout {
        case .progressive, .gray:
            return try JPEGEncoder.encode(image, quality: quality, quantizer: quantizer, iccProfile: nil)
        case .baseline, .grayBaseline:
            let gray = image.channels == 1
            return try JPEGEncoder.encode(
                image, inputColorSpace: gray ? JCS_GRAYSCALE : JCS_EXT_RGBX,
                jpegColorSpace: gray ? JCS_GRAYSCALE : JCS_YCbCr, quality: quality, quantTable: nil, scans: nil,
                subsampleChroma: true, writeAdobe: false, quantizer: quantizer, iccProfile: nil)
        case .fullChroma:
            return try JPEGEncoder.encode(
                image, inputColorSpace: JCS_EXT_RGBX, jpegColorSpace: JCS_YCbCr, quality: quality,
                chromaQuality: JPEGEncoder.chromaQuality(for: quality), quantTable: JPEGEncoder.robidouxTable,
                scans: JPEGEncoder.colorScans, subsampleChroma: false, writeAdobe: false, quantizer: quantizer,
                iccProfile: nil)
        case .cmyk:
            // The RGBX bytes taken as C, M, Y, K inks.
            return try JPEGEncoder.encode(
                image, inputColorSpace: JCS_CMYK, jpegColorSpace: JCS_CMYK, quality: quality, quantTable: nil,
                scans: nil, subsampleChroma: false, writeAdobe: true, quantizer: quantizer, iccProfile: nil)
        }
    }

    static func image(for layout: Layout, width: Int, height: Int) -> PixelBuffer {
        scene(width: width, height: height, gray: layout == .gray || layout == .grayBaseline)
    }

    @Test func fdct_MatchesTheDefinition_WithinFixedPointRounding() {
        // jpeg_fdct_islow's outputs are 8× the orthonormal 2-D DCT-II; its 13-bit constants and
        // two roundings keep it within a couple of units of the exact value.
        var state: UInt64 = 99
        var worst = 0.0
        for trial in 0..<200 {
            var samples = [Int16](repeating: 0, count: 64)
            for i in 0..<64 {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                // Half the blocks full-range noise, half smooth ramps.
                samples[i] =
                    trial % 2 == 0
                    ? Int16(Int(state >> 56) - 128) : Int16((i % 8) * 9 + (i / 8) * 7 - 60)
            }
            var transformed = samples
            transformed.withUnsafeMutableBufferPointer { gd_fdct_islow($0.baseAddress) }
            for v in 0..<8 {
                for u in 0..<8 {
                    var sum = 0.0
                    for y in 0..<8 {
                        for x in 0..<8 {
                            sum +=
                                Double(samples[y * 8 + x]) * cos(Double(2 * x + 1) * Double(u) * .pi / 16)
                                * cos(Double(2 * y + 1) * Double(v) * .pi / 16)
                        }
                    }
                    let cu = u == 0 ? 1 / 2.0.squareRoot() : 1
                    let cv = v == 0 ? 1 / 2.0.squareRoot() : 1
                    let exact = 8 * 0.25 * cu * cv * sum
                    worst = max(worst, abs(exact - Double(transformed[v * 8 + u])))
                }
            }
        }
        #expect(worst <= 3, "largest deviation \(worst)")
    }

    @Test(arguments: Layout.allCases)
    func rounding_WritesLibjpegsBytes(layout: Layout) throws {
        // Colour conversion, downsampling, edge padding, DCT and rounding all as libjpeg: the
        // coefficient path must reproduce libjpeg's file byte for byte.
        for size in Self.oddSizes {
            let image = Self.image(for: layout, width: size.width, height: size.height)
            for quality in [50, 80, 95] {
                let ours = try Self.encode(image, layout, quantizer: .rounding, quality: quality)
                let libjpeg = try Self.encode(image, layout, quantizer: .libjpeg, quality: quality)
                #expect(ours == libjpeg, "\(layout) \(size.width)×\(size.height) Q\(quality)")
            }
        }
    }

    @Test(arguments: Layout.allCases)
    func trellis_DecodesToTheImage_AtEverySize(layout: Layout) throws {
        for size in Self.oddSizes {
            let image = Self.image(for: layout, width: size.width, height: size.height)
            let jpeg = try Self.encode(image, layout, quantizer: .trellis)
            let info = try ImageProbe.probe(bytes: jpeg)
            #expect(info.width == size.width && info.height == size.height)
            #expect(info.isProgressive == (layout == .progressive || layout == .gray || layout == .fullChroma))
            if layout == .cmyk {
                #expect(info.colorSpace == .cmyk)
                continue  // the decode helper reads RGB or gray; the CMYK file is read by the pipeline test
            }
            let decoded = try TestImages.decode(jpeg)
            #expect(decoded.width == size.width && decoded.height == size.height)
            let error = Self.meanError(decoded, image)
            let reference = Self.meanError(
                try TestImages.decode(try Self.encode(image, layout, quantizer: .libjpeg)), image)
            // Trellis trades a little error for bytes; it stays near libjpeg's rounding.
            #expect(error <= reference * 1.25 + 1, "\(layout) \(size.width)×\(size.height): \(error) vs \(reference)")
        }
    }

    @Test func trellis_SavesBytes_OnAPhotoLikeImage() throws {
        let image = Self.scene(width: 256, height: 192)
        for layout in [Layout.progressive, .baseline, .fullChroma] {
            let trellis = try Self.encode(image, layout, quantizer: .trellis)
            let libjpeg = try Self.encode(image, layout, quantizer: .libjpeg)
            #expect(trellis.count < libjpeg.count, "\(layout): \(trellis.count) vs \(libjpeg.count)")
        }
    }

    @Test func trellis_IsDeterministic() throws {
        let image = Self.scene(width: 97, height: 61)
        for layout in Layout.allCases {
            let source =
                layout == .gray || layout == .grayBaseline ? Self.scene(width: 97, height: 61, gray: true) : image
            let first = try Self.encode(source, layout, quantizer: .trellis)
            let second = try Self.encode(source, layout, quantizer: .trellis)
            #expect(first == second, "\(layout)")
        }
    }

    @Test func streamEncoder_WritesTheOneShotBytes_WithEitherCoefficientQuantizer() throws {
        for gray in [false, true] {
            let image = Self.scene(width: 45, height: 37, gray: gray)
            for quantizer in [JPEGQuantizer.rounding, .trellis] {
                let stream = try JPEGStreamEncoder(
                    width: image.width, height: image.height, channels: image.channels, quality: 80,
                    quantizer: quantizer, iccProfile: TestImages.iccProfile(size: 300, space: gray ? "GRAY" : "RGB "))
                try stream.write(image)
                let streamed = try stream.finish()
                let oneShot = try JPEGEncoder.encode(
                    image, quality: 80, quantizer: quantizer,
                    iccProfile: TestImages.iccProfile(size: 300, space: gray ? "GRAY" : "RGB "))
                #expect(streamed == oneShot, "gray \(gray) \(quantizer)")
            }
        }
    }

    @Test func streamEncoder_Throws_WhenRowsAreMissing() throws {
        let stream = try JPEGStreamEncoder(
            width: 20, height: 20, channels: 4, quality: 80, quantizer: .trellis, iccProfile: nil)
        var row = [UInt8](repeating: 128, count: 80)
        try row.withUnsafeMutableBufferPointer { try stream.write(row: $0.baseAddress!) }
        #expect(throws: ImageError.self) { try stream.finish() }
    }

    @Test func coefficientPath_RefusesAConversionItDoesNotDo() throws {
        // libjpeg can turn RGB into a gray JPEG; the coefficient path says it cannot.
        let image = Self.scene(width: 16, height: 16)
        #expect(throws: ImageError.self) {
            try JPEGEncoder.encode(
                image, inputColorSpace: JCS_EXT_RGBX, jpegColorSpace: JCS_GRAYSCALE, quality: 80, quantTable: nil,
                scans: nil, subsampleChroma: false, writeAdobe: false, quantizer: .trellis, iccProfile: nil)
        }
        do {
            _ = try JPEGEncoder.encode(
                image, inputColorSpace: JCS_EXT_RGBX, jpegColorSpace: JCS_GRAYSCALE, quality: 80, quantTable: nil,
                scans: nil, subsampleChroma: false, writeAdobe: false, quantizer: .trellis, iccProfile: nil)
        } catch ImageError.encodeFailed(let message) {
            #expect(message.contains("coefficient path"))
        }
    }

    @Test(arguments: [JPEGQuantizer.rounding, .trellis])
    func pipeline_MakesReadableDerivatives_WithTheCoefficientPath(quantizer: JPEGQuantizer) throws {
        let spec = DerivativeSpec(thumbnailShortEdge: 40, previewLongEdge: 120, quality: 80, quantizer: quantizer)
        let sources: [(name: String, jpeg: [UInt8], gray: Bool)] = [
            ("progressive", try TestImages.progressive(Self.scene(width: 301, height: 203)), false),
            ("baseline gray", try TestImages.baseline(Self.scene(width: 123, height: 250, gray: true)), true),
            (
                "cmyk",
                try TestImages.cmyk(
                    TestImages.quadrants(
                        width: 150, height: 100, TestImages.red, TestImages.green, TestImages.blue,
                        TestImages.yellow), flavor: .adobeInverted), false
            ),
        ]
        for source in sources {
            let result = try ImagePipeline.process(bytes: source.jpeg, spec: spec)
            for output in [result.thumbnail, result.preview] {
                let decoded = try TestImages.decode(output.jpeg)
                #expect(decoded.width == output.width && decoded.height == output.height, "\(source.name)")
                #expect(decoded.channels == (source.gray ? 1 : 4), "\(source.name)")
            }
            if source.name == "cmyk" {
                // Quadrant colours survive the CMYK → RGB → trellis round trip.
                let preview = try TestImages.decode(result.preview.jpeg)
                let pixel = preview.rgb(x: preview.width / 4, y: preview.height / 4)
                #expect(
                    abs(Int(pixel.r) - Int(TestImages.red.0)) < 16 && abs(Int(pixel.g) - Int(TestImages.red.1)) < 16)
            }
        }
    }

    @Test func pipeline_TrellisOutputs_AreSmaller_ThanLibjpegs() throws {
        let original = try TestImages.progressive(Self.scene(width: 640, height: 427), quality: 95)
        let ours = try ImagePipeline.process(
            bytes: original, spec: DerivativeSpec(thumbnailShortEdge: 200, previewLongEdge: 600, quantizer: .trellis))
        let libjpeg = try ImagePipeline.process(
            bytes: original, spec: DerivativeSpec(thumbnailShortEdge: 200, previewLongEdge: 600))
        #expect(ours.preview.jpeg.count < libjpeg.preview.jpeg.count)
        #expect(ours.thumbnail.jpeg.count < libjpeg.thumbnail.jpeg.count)
        #expect(ours.dominantColor == libjpeg.dominantColor)
    }
}

extension JPEGStreamEncoder {
    /// Writes `image`'s first `rows` rows (all of them by default), as the pipeline's resampler hands them over.
    func write(_ image: PixelBuffer, rows: Int? = nil) throws {
        var bytes = image.bytes
        try bytes.withUnsafeMutableBufferPointer { buffer in
            for y in 0..<(rows ?? image.height) { try write(row: buffer.baseAddress! + y * image.stride) }
        }
    }
}
