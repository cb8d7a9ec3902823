import Testing

@testable import Imaging

/// Gray originals that are not JPEGs get one-component derivatives on `GrayDerivatives`' tables (decision 069).
@Suite struct GrayDerivativesTests {
    /// The luma steps of a JPEG that must have exactly `components` components.
    static func luma(_ jpeg: [UInt8], components: Int) throws -> [UInt32] {
        let quantization = try ImageProbe.probe(bytes: jpeg).componentQuantization
        try #require(quantization.count == components)
        return quantization[0].steps.map { UInt32($0) }
    }

    /// Four gray levels in quadrants, 96×64 (a flat picture), as the PNG colour type asked for.
    static func grayQuadrants(_ colorType: PNGWriter.ColorType, width: Int = 96, height: Int = 64) -> [UInt8] {
        let levels = [40, 215, 100, 160]
        return PNGWriter(width: width, height: height, colorType: colorType) { x, y in
            let level = levels[(y < height / 2 ? 0 : 2) + (x < width / 2 ? 0 : 1)]
            switch colorType {
            case .gray: return [level]
            case .grayAlpha: return [level, 255]
            case .rgba: return [level, level, level, 255]
            default: return [level, level, level]
            }
        }.encode()
    }

    @Test func achromatic_AllowsTwoStepsOfChromaAndNoMore() {
        var image = PixelBuffer(width: 5, height: 3, channels: 4)
        for index in 0..<15 { image.bytes.replaceSubrange(4 * index..<4 * index + 3, with: [90, 90, 90]) }
        #expect(image.isAchromatic())
        image.bytes[4 * 13] = 92  // red 2 over green
        image.bytes[4 * 13 + 2] = 88  // blue 2 under
        #expect(image.isAchromatic())
        image.bytes[4 * 14 + 2] = 93  // blue 3 over, on the last pixel of the last row
        #expect(!image.isAchromatic())
        #expect(PixelBuffer(width: 2, height: 2, channels: 1).isAchromatic())
    }

    @Test func grayscale_TakesLibjpegsLuma() {
        let image = PixelBuffer(
            width: 3, height: 1, channels: 4, bytes: [255, 0, 0, 0, 0, 255, 0, 0, 100, 100, 100, 0])
        let gray = image.grayscale()
        #expect(gray.channels == 1 && gray.width == 3 && gray.height == 1)
        // 0.299 × 255 = 76.2, 0.587 × 255 = 149.7; a gray pixel keeps its level.
        #expect(gray.bytes == [76, 150, 100])
    }

    /// Every way a gray PNG comes (grey, grey + alpha, RGB and RGBA with equal channels), with its preview
    /// at the original's size (spec 64 → the 96×64 original is downscaled: `previewLongEdge` 128 keeps it):
    /// both files have one component, the preview on Klein's table one above the spec's original-size
    /// quality (flat), the thumbnail one above the spec's thumbnail quality.
    @Test(arguments: [PNGWriter.ColorType.gray, .grayAlpha, .rgb, .rgba])
    func grayPNG_HasOneComponentDerivatives(colorType: PNGWriter.ColorType) throws {
        let spec = DerivativeSpec(thumbnailShortEdge: 32, previewLongEdge: 128, quality: 60)
        let result = try ImagePipeline.process(bytes: Self.grayQuadrants(colorType), spec: spec)
        #expect(result.preview.width == 96 && result.thumbnail.height == 32)
        let preview = QuantizationTables(kleinQuality: spec.previewQuality(keepsOriginalSize: true) + 1, gray: true)
        #expect(try Self.luma(result.preview.jpeg, components: 1) == preview.luma)
        let thumbnail = QuantizationTables(kleinQuality: spec.effectiveThumbnailQuality + 1, gray: true)
        #expect(try Self.luma(result.thumbnail.jpeg, components: 1) == thumbnail.luma)
        #expect(result.dominantColor.dropFirst(1).prefix(2) == result.dominantColor.dropFirst(3).prefix(2))
    }

    /// A gray PNG larger than the preview, whose preview would be encoded while it is resampled: it is kept
    /// to be encoded as gray, on Klein's table three above the spec's downscaled quality.
    @Test func largeGrayPNG_DownscaledPreviewIsGray() throws {
        let spec = DerivativeSpec(thumbnailShortEdge: 32, previewLongEdge: 64, quality: 60)
        let result = try ImagePipeline.process(bytes: Self.grayQuadrants(.gray, width: 192, height: 128), spec: spec)
        #expect(result.preview.width == 64)
        let preview = QuantizationTables(kleinQuality: spec.previewQuality(keepsOriginalSize: false) + 3, gray: true)
        #expect(try Self.luma(result.preview.jpeg, components: 1) == preview.luma)
    }

    /// A gray HEIC (4:2:0, its chroma neutral) and a gray WebP: one component; the colour quadrants keep three.
    @Test func grayHEICAndWebP_HaveOneComponent_ColourKeepsThree() throws {
        let spec = DerivativeSpec(thumbnailShortEdge: 32, previewLongEdge: 128, quality: 60)
        let png = Self.grayQuadrants(.rgb)
        for bytes in [
            try FixtureTools.heic(png, options: ["-q", "90"]), try FixtureTools.webp(png, options: ["-q", "95"]),
        ] {
            let result = try ImagePipeline.process(bytes: bytes, spec: spec)
            _ = try Self.luma(result.preview.jpeg, components: 1)
            _ = try Self.luma(result.thumbnail.jpeg, components: 1)
        }
        for format in [ImageFormat.heif, .png, .webp] {
            let colour = try ImagePipeline.process(bytes: SourceEncoderSettingsTests.quadrants(as: format), spec: spec)
            _ = try Self.luma(colour.preview.jpeg, components: 3)
            _ = try Self.luma(colour.thumbnail.jpeg, components: 3)
        }
    }

    /// A gray original's near-size thumbnail (90×60 of a 96×64 preview at the original's size): a WebP's on
    /// Klein's table at the spec's thumbnail quality (`grayNearSizeThumbnailStep` 0: vips' thumbnail of a WebP
    /// is made by libwebp's rescaler, decision 072, session 26), a PNG's and a HEIC's one above it as every
    /// other gray thumbnail; a WebP's thumbnail that is not near-size (32 high) stays one above too.
    @Test func grayNearSizeThumbnail_WebPsAtTheSpecsQuality_OthersOneAbove() throws {
        let near = DerivativeSpec(thumbnailShortEdge: 60, previewLongEdge: 128, quality: 60)
        let png = Self.grayQuadrants(.rgb)
        let sources: [(bytes: [UInt8], step: Int)] = [
            (try FixtureTools.webp(png, options: ["-q", "95"]), 0), (png, 1),
            (try FixtureTools.heic(png, options: ["-q", "90"]), 1),
        ]
        for (bytes, step) in sources {
            let result = try ImagePipeline.process(bytes: bytes, spec: near)
            #expect(result.preview.width == 96 && result.thumbnail.width == 90 && result.thumbnail.height == 60)
            let thumbnail = QuantizationTables(kleinQuality: near.effectiveThumbnailQuality + step, gray: true)
            #expect(try Self.luma(result.thumbnail.jpeg, components: 1) == thumbnail.luma)
        }
        let small = DerivativeSpec(thumbnailShortEdge: 32, previewLongEdge: 128, quality: 60)
        let result = try ImagePipeline.process(bytes: try FixtureTools.webp(png, options: ["-q", "95"]), spec: small)
        let thumbnail = QuantizationTables(kleinQuality: small.effectiveThumbnailQuality + 1, gray: true)
        #expect(try Self.luma(result.thumbnail.jpeg, components: 1) == thumbnail.luma)
    }
}
