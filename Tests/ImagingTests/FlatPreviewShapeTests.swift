import Testing

@testable import Imaging

/// A flat HEIC's or AVIF's preview at the original's size in the oracle's shape, Cr on a third table
/// (decision 075): the rule's tables scaled step by step by the searched table over the one the search started
/// from, then by 0.93; a detailed, gray, downscaled or near-size thumbnail's tables as before.
@Suite struct FlatPreviewShapeTests {
    /// The default spec's flat preview (Klein 80, chroma 20 below, five steps held: dune's at main) in the
    /// shape: the tables decision 075 measured on the bench's dune (+0.49 over vips' at 0.908× its bytes).
    static let duneLuma: [UInt32] = [
        4, 5, 8, 10, 12, 14, 21, 32, 5, 9, 10, 14, 13, 15, 20, 28, 8, 10, 12, 12, 17, 23, 34, 45,
        10, 14, 12, 15, 20, 28, 35, 52, 12, 13, 17, 20, 26, 32, 44, 71, 14, 15, 23, 28, 32, 42, 63, 89,
        21, 20, 34, 35, 44, 63, 85, 116, 32, 28, 45, 52, 71, 89, 116, 156,
    ]
    static let duneCb: [UInt32] = [
        3, 5, 11, 16, 20, 28, 43, 64, 5, 7, 18, 20, 26, 31, 40, 57, 7, 18, 19, 24, 33, 46, 69, 101,
        16, 20, 24, 31, 40, 56, 80, 117, 20, 26, 33, 40, 52, 71, 99, 141, 28, 31, 46, 56, 71, 93, 126, 178,
        43, 40, 69, 80, 99, 126, 169, 232, 64, 57, 101, 117, 141, 178, 232, 237,
    ]
    static let duneCr: [UInt32] = [
        3, 6, 10, 12, 20, 25, 43, 64, 6, 7, 14, 20, 23, 31, 40, 57, 6, 14, 19, 21, 33, 46, 69, 101,
        12, 20, 21, 31, 40, 56, 80, 117, 20, 23, 33, 40, 52, 71, 99, 141, 25, 31, 46, 56, 71, 93, 126, 178,
        43, 40, 69, 80, 99, 126, 169, 232, 64, 57, 101, 117, 141, 178, 232, 237,
    ]

    @Test func heifPreviews_ShapesTheDefaultFlatTables() {
        let shape = SourceEncoderSettings.FlatPreviewShape.heifPreviews
        #expect(shape.scale == 0.93 && shape.searched.count == 3 && shape.start.count == 2)
        #expect(shape.searched.allSatisfy { $0.count == 64 } && shape.start.allSatisfy { $0.count == 64 })
        let flat = SourceEncoderSettingsTests.webpOriginalSizePreview(80)
        // The search started from the default spec's flat tables.
        #expect(shape.start[0] == flat.luma && shape.start[1] == flat.chroma)
        let shaped = shape.tables(flat)
        #expect(shaped.luma == Self.duneLuma && shaped.chroma == Self.duneCb && shaped.cr == Self.duneCr)
        // A gray table stays as it is. The steps the shape makes coarser (the luma's diagonals 2–4, 255 × 1.25 ×
        // 0.93 = 296) stay at JPEG's 8-bit 255; none rounds to 0 (the least factor, 0.65, takes a step of 1 to 1).
        let gray = QuantizationTables(kleinQuality: 80, gray: true)
        #expect(shape.tables(gray) == gray && shape.tables(gray).cr == nil)
        let coarsest = [UInt32](repeating: 255, count: 64)
        let clamped = shape.tables(QuantizationTables(luma: coarsest, chroma: coarsest))
        #expect(clamped.luma.allSatisfy { $0 <= 255 } && clamped.luma[2] == 255 && clamped.luma[0] < 255)
        #expect(clamped.cr!.allSatisfy { $0 <= 255 })
        let ones = [UInt32](repeating: 1, count: 64)
        #expect(shape.tables(QuantizationTables(luma: ones, chroma: ones)).steps.allSatisfy { $0 == 1 })
    }

    /// The original-size rules (`heifPreviews`, `heifNearSizePreviews`) shape a flat preview's tables, pale ones
    /// after their finer step; a detailed preview's and the downscaled and thumbnail rules' are as before.
    @Test func heifRules_ShapeFlatOriginalSizePreviewsOnly() {
        let shape = SourceEncoderSettings.FlatPreviewShape.heifPreviews
        let preview = SourceEncoderSettings.KleinRule.heifPreviews
        #expect(preview.shape == shape && SourceEncoderSettings.KleinRule.heifNearSizePreviews.shape == shape)
        let flat = SourceEncoderSettingsTests.webpOriginalSizePreview(80)
        #expect(preview.tables(80, gradient: 1, meanChroma: 30) == shape.tables(flat))
        #expect(preview.tables(80, gradient: 1, meanChroma: 30).cr == Self.duneCr)
        #expect(preview.tables(80, gradient: 1, meanChroma: 17) == shape.tables(flat.scaled(by: 0.95)))
        #expect(preview.tables(80, gradient: 6, meanChroma: 30) == QuantizationTables(kleinQuality: 82))
        #expect(preview.tables(80, gradient: 6, meanChroma: 30).cr == nil)
        for other in [
            SourceEncoderSettings.KleinRule.heifDownscaledPreviews, .avifDownscaledPreviews, .heifNearSizeThumbnails,
            .webpPreviews, .rasterPreviews,
        ] {
            #expect(other.shape == nil)
        }
    }

    /// A third table reaches the file: Cr on it, Cb on the second; without one Cr shares Cb's.
    @Test func jpegEncoder_WritesCrOnItsOwnTable() throws {
        let image = PixelBuffer(width: 32, height: 32, channels: 4, bytes: (0..<(32 * 32 * 4)).map { UInt8($0 % 251) })
        let shaped = SourceEncoderSettings.FlatPreviewShape.heifPreviews.tables(
            SourceEncoderSettingsTests.webpOriginalSizePreview(80))
        let jpeg = try JPEGEncoder.encode(image, quality: 80, iccProfile: nil, tables: shaped)
        let components = try ImageProbe.probe(bytes: jpeg).componentQuantization
        try #require(components.count == 3)
        #expect(components.map { $0.steps.map { UInt32($0) } } == [Self.duneLuma, Self.duneCb, Self.duneCr])
        #expect(try SourceEncoderSettingsTests.tables(jpeg) == shaped)
        let two = QuantizationTables(luma: shaped.luma, chroma: shaped.chroma)
        let plain = try ImageProbe.probe(
            bytes: JPEGEncoder.encode(image, quality: 80, iccProfile: nil, tables: two)
        ).componentQuantization
        #expect(plain[2].steps == plain[1].steps && plain[1].steps.map { UInt32($0) } == Self.duneCb)
    }

    /// The streamed encoder (a preview written row by row) takes the three tables as the one-shot one does.
    @Test func streamEncoder_WritesTheOneShotBytesWithThreeTables() throws {
        let image = JPEGQuantizerTests.scene(width: 45, height: 37, gray: false)
        let shaped = SourceEncoderSettings.FlatPreviewShape.heifPreviews.tables(
            SourceEncoderSettingsTests.webpOriginalSizePreview(80))
        let stream = try JPEGStreamEncoder(
            width: image.width, height: image.height, channels: image.channels, quality: 80, iccProfile: nil,
            tables: shaped)
        try stream.write(image)
        let streamed = try stream.finish()
        #expect(streamed == (try JPEGEncoder.encode(image, quality: 80, iccProfile: nil, tables: shaped)))
        let components = try ImageProbe.probe(bytes: streamed).componentQuantization
        #expect(components.map { $0.steps.map { UInt32($0) } } == [Self.duneLuma, Self.duneCb, Self.duneCr])
    }

    /// Read back from the pipeline: a flat colourful HEIC's and AVIF's preview at the original's size carries
    /// the shaped tables, three of them (spec 60: Klein 60's flat tables in the shape).
    @Test func flatHEIFPreview_CarriesTheShape() throws {
        let png = SourceEncoderSettingsTests.levelsPNG(tint: 40)
        let spec = DerivativeSpec(thumbnailShortEdge: 32, previewLongEdge: 128, quality: 60)
        let expected = SourceEncoderSettings.FlatPreviewShape.heifPreviews.tables(
            SourceEncoderSettingsTests.webpOriginalSizePreview(60))
        #expect(expected.cr != nil && expected.cr != expected.chroma)
        for bytes in [
            try FixtureTools.heic(png, options: ["-q", "90"]),
            try FixtureTools.heic(png, options: ["-A", "-q", "90"], avif: true),
        ] {
            let result = try ImagePipeline.process(bytes: bytes, spec: spec)
            #expect(result.preview.width == 96 && result.thumbnailSource != .samePixels)
            #expect(try SourceEncoderSettingsTests.tables(result.preview.jpeg) == expected)
        }
    }
}
