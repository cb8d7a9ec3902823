import Testing

@testable import Imaging

/// A gray picture whose downscaled preview is encoded while it is resampled (an RGB or RGBA PNG, a WebP larger
/// than the preview): its rows are checked as they stream by (`StreamedGrayCheck`), and a preview that was gray
/// to its last row gets one-component derivatives on `GrayDerivatives`' tables (decision 069, session 22).
@Suite struct StreamedGrayTests {
    /// 192×128, larger than the 64-pixel preview: a gray ramp over four gray quadrants, as the PNG colour type
    /// asked for (grey + alpha and RGBA half transparent on the right, flattened onto white); with
    /// `colourLastRow`, its last row alone red.
    static func grayPicture(_ colorType: PNGWriter.ColorType, colourLastRow: Bool = false) -> [UInt8] {
        let (width, height) = (192, 128)
        return PNGWriter(width: width, height: height, colorType: colorType) { x, y in
            let level = 30 + (x + 2 * y) % 60 + (y < height / 2 ? 0 : 90) + (x < width / 2 ? 0 : 40)
            let alpha = x < width / 2 ? 255 : 128
            if colourLastRow, y == height - 1 {
                switch colorType {
                case .rgba: return [255, 0, 0, 255]
                default: return [255, 0, 0]
                }
            }
            switch colorType {
            case .gray: return [level]
            case .grayAlpha: return [level, alpha]
            case .rgba: return [level, level, level, alpha]
            default: return [level, level, level]
            }
        }.encode()
    }

    static let spec = DerivativeSpec(thumbnailShortEdge: 32, previewLongEdge: 64, quality: 60)

    /// Klein's table three above the spec's downscaled preview quality, one above its thumbnail quality.
    static let previewLuma = QuantizationTables(
        kleinQuality: spec.previewQuality(keepsOriginalSize: false) + 3, gray: true
    ).luma
    static let thumbnailLuma = QuantizationTables(kleinQuality: spec.effectiveThumbnailQuality + 1, gray: true).luma

    /// The files of `bytes` under `spec`, which must be downscaled to a 64-pixel preview.
    static func derivatives(_ bytes: [UInt8]) throws -> ProcessedImage {
        let result = try ImagePipeline.process(bytes: bytes, spec: spec)
        try #require(result.preview.width == 64 && result.preview.height == 43)
        return result
    }

    /// An RGB and an RGBA PNG of a gray picture (streamed previews), and a grey + alpha one (kept, as a grey
    /// PNG's is): one component each, on the gray tables.
    @Test(arguments: [PNGWriter.ColorType.rgb, .rgba, .grayAlpha])
    func largeGrayPNG_HasOneComponentDerivatives(colorType: PNGWriter.ColorType) throws {
        let result = try Self.derivatives(Self.grayPicture(colorType))
        #expect(try GrayDerivativesTests.luma(result.preview.jpeg, components: 1) == Self.previewLuma)
        #expect(try GrayDerivativesTests.luma(result.thumbnail.jpeg, components: 1) == Self.thumbnailLuma)
        #expect(result.dominantColor.dropFirst(1).prefix(2) == result.dominantColor.dropFirst(3).prefix(2))
    }

    /// A lossy and a lossless WebP of the gray picture, decoded shrunk to the preview's size and streamed:
    /// one component each, on the gray tables.
    @Test(arguments: [["-q", "90"], ["-lossless"]])
    func largeGrayWebP_HasOneComponentDerivatives(options: [String]) throws {
        let webp = try FixtureTools.webp(Self.grayPicture(.rgb), options: options)
        let result = try Self.derivatives(webp)
        #expect(try GrayDerivativesTests.luma(result.preview.jpeg, components: 1) == Self.previewLuma)
        #expect(try GrayDerivativesTests.luma(result.thumbnail.jpeg, components: 1) == Self.thumbnailLuma)
    }

    /// The same picture with colour in its last row only is colour: every row is checked, and the colour
    /// encode that streamed by is the one written.
    @Test func colourInTheLastRowOnly_KeepsThreeComponents() throws {
        let png = Self.grayPicture(.rgb, colourLastRow: true)
        for bytes in [
            png, Self.grayPicture(.rgba, colourLastRow: true), try FixtureTools.webp(png, options: ["-lossless"]),
        ] {
            let result = try Self.derivatives(bytes)
            _ = try GrayDerivativesTests.luma(result.preview.jpeg, components: 3)
            _ = try GrayDerivativesTests.luma(result.thumbnail.jpeg, components: 3)
        }
    }

    /// The check's luma is `grayscale()`'s of the same rows (37 pixels wide: the C kernel's vectors and its
    /// tail); a row past the tolerance, even on the last pixel of the last row, drops it.
    @Test func check_KeepsGrayscalesLuma_DropsItAtAColourfulRow() {
        let (width, height) = (37, 3)
        var image = PixelBuffer(width: width, height: height, channels: 4)
        for index in 0..<(width * height) {
            let level = UInt8(37 * index % 250 + 2)
            let (red, blue) = [(level &+ 2, level &- 2), (level &- 1, level &+ 1), (level, level)][index % 3]
            image.bytes.replaceSubrange(4 * index..<4 * index + 3, with: [red, level, blue])
        }
        func run(_ image: PixelBuffer) -> PixelBuffer? {
            let check = StreamedGrayCheck(width: width, height: height)
            image.bytes.withUnsafeBufferPointer { pixels in
                for y in 0..<height { check.take(row: pixels.baseAddress! + y * width * 4) }
            }
            return check.preview
        }
        #expect(run(image)?.bytes == image.grayscale().bytes)
        #expect(run(image)?.channels == 1)
        let last = width * height - 1
        image.bytes[4 * last + 2] = image.bytes[4 * last + 1] &+ 3  // blue 3 over green, the last pixel
        #expect(run(image) == nil)
        // Fewer rows than the preview's: not a gray preview.
        let partial = StreamedGrayCheck(width: 1, height: 2)
        [UInt8](repeating: 90, count: 4).withUnsafeBufferPointer { partial.take(row: $0.baseAddress!) }
        #expect(partial.preview == nil)
    }
}
