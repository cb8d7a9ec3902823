import CResampleKernels
import Testing

@testable import Imaging

/// A HEIC's or AVIF's flat thumbnails are quantized by trellis, lambda's texture masking off, on a finer
/// Klein table than libjpeg's (decision 063, "Session 22 (t22)"); a detailed one, a configured quantizer
/// and the previews keep libjpeg. The quantizer is read back as the bytes: the pipeline's file against
/// each encoder's of the same pixels, and its tables from the DQT.
@Suite struct HEIFTrellisTests {
    /// 96×64 of soft texture as a HEIC (`heif-enc -q 90`): a diagonal ramp with deterministic noise, flat to
    /// `PreviewDetail` (mean luma gradient under 6) but with AC coefficients left for trellis to choose.
    static func softTextureHEIC() throws -> [UInt8] {
        var image = PixelBuffer(width: 96, height: 64, channels: 4)
        var state: UInt64 = 7
        for y in 0..<64 {
            for x in 0..<96 {
                let i = (y * 96 + x) * 4
                for c in 0..<3 {
                    state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                    image.bytes[i + c] = UInt8(clamping: 60 + x + y + 30 * c + Int(state >> 60) - 8)
                }
                image.bytes[i + 3] = 255
            }
        }
        let png = PNGWriter(width: 96, height: 64, colorType: .rgb) { x, y in
            let rgb = image.rgb(x: x, y: y)
            return [Int(rgb.r), Int(rgb.g), Int(rgb.b)]
        }.encode()
        return try FixtureTools.heic(png, options: ["-q", "90"])
    }

    /// The HEIC's decoded pixels as RGBX (the preview at the original's size), and its thumbnail's pixels as
    /// the pipeline makes them from those rows (`passDecodedRows`: a byte-row Lanczos-3 resampler).
    static func pixels(_ heic: [UInt8], thumbnail: (width: Int, height: Int)) throws -> (
        preview: PixelBuffer, thumbnail: PixelBuffer
    ) {
        let rows = try HEIFFile(bytes: heic).decode()
        let width = rows.width
        var preview = PixelBuffer(width: width, height: rows.height, channels: 4)
        let resampler = StreamingResampler(
            sourceWidth: width, sourceHeight: rows.height, targetWidth: thumbnail.width,
            targetHeight: thumbnail.height, channels: 4, byteRows: true)
        var floats = [Float](repeating: 0, count: width * 4)
        var y = 0
        try rows.forEachRun { first, stride, count in
            for r in 0..<count {
                preview.bytes.withUnsafeMutableBufferPointer { out in
                    let row = out.baseAddress! + y * width * 4
                    gd_rgb_to_rgbx(first + r * stride, width, row, StreamingResampler.avx2)
                    if let slot = resampler.nextByteRowSlot {
                        slot.update(from: row, count: width * 4)
                        resampler.commitRow()
                    } else {
                        RowConverter.widen(row, count: width * 4, into: &floats)
                        resampler.push(row: floats)
                    }
                }
                y += 1
            }
        }
        return (preview, resampler.finish())
    }

    /// Spec 90: the 96×64 original is its own preview; a 48×32 thumbnail (not near-size) at 92, or a
    /// near-size 90×60 one at 92.
    static func spec(thumbnailShortEdge: Int = 32, _ quantizer: JPEGQuantizer = .libjpeg) -> DerivativeSpec {
        DerivativeSpec(
            thumbnailShortEdge: thumbnailShortEdge, previewLongEdge: 128, quality: 90, quantizer: quantizer)
    }

    @Test func flatHEICThumbnail_IsTrellisQuantized() throws {
        let heic = try Self.softTextureHEIC()
        let result = try ImagePipeline.process(bytes: heic, spec: Self.spec())
        #expect(result.info.format == .heif && result.preview.width == 96 && result.thumbnail.width == 48)
        let (preview, thumbnail) = try Self.pixels(heic, thumbnail: (48, 32))
        #expect(PreviewDetail.meanGradient(preview) < 6)
        let settings = SourceEncoderSettings.forSource(.heif)
        let trellis = try #require(settings.flatThumbnailTrellis)
        let tables = settings.thumbnailTables(quality: 92, trellis: trellis)
        #expect(try SourceEncoderSettingsTests.tables(result.thumbnail.jpeg) == tables)
        let trellisFile = try JPEGEncoder.encode(
            thumbnail, quality: 92, quantizer: .trellis, trellisLambda: .flat, iccProfile: nil, tables: tables)
        let libjpegFile = try JPEGEncoder.encode(thumbnail, quality: 92, iccProfile: nil, tables: tables)
        #expect(trellisFile != libjpegFile)
        #expect(result.thumbnail.jpeg == trellisFile)
        // The preview keeps libjpeg, on the row's tables.
        let previewTables = try SourceEncoderSettingsTests.tables(result.preview.jpeg)
        #expect(
            result.preview.jpeg
                == (try JPEGEncoder.encode(preview, quality: 90, iccProfile: nil, tables: previewTables)))
        // A configured quantizer is kept, on libjpeg's step: `rounding` writes libjpeg's bytes.
        let rounding = try ImagePipeline.process(bytes: heic, spec: Self.spec(.rounding))
        let libjpegTables = SourceEncoderSettingsTests.thumbnailTables(.heif, quality: 92)
        #expect(try SourceEncoderSettingsTests.tables(rounding.thumbnail.jpeg) == libjpegTables)
        #expect(
            rounding.thumbnail.jpeg
                == (try JPEGEncoder.encode(thumbnail, quality: 92, iccProfile: nil, tables: libjpegTables)))
    }

    @Test func flatHEICNearSizeThumbnail_IsTrellisQuantized() throws {
        let heic = try Self.softTextureHEIC()
        let result = try ImagePipeline.process(bytes: heic, spec: Self.spec(thumbnailShortEdge: 60))
        #expect(result.preview.width == 96 && result.thumbnail.width == 90 && result.thumbnail.height == 60)
        let (preview, thumbnail) = try Self.pixels(heic, thumbnail: (90, 60))
        let rule = try #require(SourceEncoderSettings.forSource(.heif).nearSizeThumbnailKlein)
        let gradient = PreviewDetail.meanGradient(preview)
        let trellis = try #require(rule.trellis(gradient: gradient))
        let tables = rule.tables(
            92, gradient: gradient, meanChroma: PreviewDetail.meanChroma(preview), trellis: trellis)
        #expect(try SourceEncoderSettingsTests.tables(result.thumbnail.jpeg) == tables)
        let trellisFile = try JPEGEncoder.encode(
            thumbnail, quality: 92, quantizer: .trellis, trellisLambda: .flat, iccProfile: nil, tables: tables)
        #expect(trellisFile != (try JPEGEncoder.encode(thumbnail, quality: 92, iccProfile: nil, tables: tables)))
        #expect(result.thumbnail.jpeg == trellisFile)
    }

    /// The detailed checkerboard's thumbnail stays with libjpeg on the row's tables.
    @Test func detailedHEICThumbnail_StaysWithLibjpeg() throws {
        let heic = try SourceEncoderSettingsTests.detailed(as: .heif)
        let result = try ImagePipeline.process(bytes: heic, spec: Self.spec())
        let (preview, thumbnail) = try Self.pixels(heic, thumbnail: (48, 32))
        #expect(PreviewDetail.meanGradient(preview) >= 6)
        let tables = SourceEncoderSettingsTests.thumbnailTables(.heif, quality: 92)
        #expect(try SourceEncoderSettingsTests.tables(result.thumbnail.jpeg) == tables)
        #expect(
            result.thumbnail.jpeg == (try JPEGEncoder.encode(thumbnail, quality: 92, iccProfile: nil, tables: tables)))
    }

    /// The rows: HEIC's and AVIF's flat thumbnails by trellis with the flat lambda, a near-size one at the
    /// thumbnail's quality in force (libjpeg's 2 below), another half a quality above it (libjpeg's 1
    /// below), neither with its chroma sharpened (decision 071); none when detailed, none for the previews,
    /// none for PNG or WebP.
    @Test func heifRows_TrellisForFlatThumbnails() throws {
        let flat = JPEGQuantizer.TrellisLambda.flat
        for format in [ImageFormat.heif, .avif] {
            let settings = SourceEncoderSettings.forSource(format)
            #expect(settings.flatThumbnailTrellis == SourceEncoderSettings.FlatTrellis(lambda: flat, step: 0.5))
            // No chroma sharpening (decision 071: measured, not kept).
            #expect(settings.flatThumbnailTrellis?.chromaSharpening == 0)
            #expect(settings.nearSizeThumbnailKlein?.flatTrellis?.chromaSharpening == 0)
            #expect(
                settings.nearSizeThumbnailKlein?.flatTrellis == SourceEncoderSettings.FlatTrellis(lambda: flat, step: 0)
            )
            #expect(settings.originalSizePreviewKlein?.flatTrellis == nil)
            #expect(settings.downscaledPreviewKlein?.flatTrellis == nil)
        }
        for format in [ImageFormat.jpeg, .png, .webp] {
            #expect(SourceEncoderSettings.forSource(format).flatThumbnailTrellis == nil)
        }
        let nearSize = SourceEncoderSettings.KleinRule.heifNearSizeThumbnails
        #expect(nearSize.trellis(gradient: 5.99)?.lambda == flat)
        #expect(nearSize.trellis(gradient: 6) == nil)
        let nearSizeTrellis = try #require(nearSize.flatTrellis)
        #expect(
            nearSize.tables(92, gradient: 5.99, meanChroma: 40, trellis: nearSizeTrellis)
                == SourceEncoderSettingsTests.webpOriginalSizePreview(92))
        let heif = SourceEncoderSettings.forSource(.heif)
        #expect(
            heif.thumbnailTables(quality: 92, trellis: try #require(heif.flatThumbnailTrellis))
                == SourceEncoderSettingsTests.coarseChroma(luma: 92.5, chroma: 81.5, held: [0, 1, 8]))
        #expect(JPEGQuantizer.TrellisLambda.flat == JPEGQuantizer.TrellisLambda(logScale1: 18.25, logScale2: 20))
        #expect(JPEGQuantizer.TrellisLambda.masked == JPEGQuantizer.TrellisLambda(logScale1: 14.75, logScale2: 16.5))
    }

    /// The lambda reaches the shim: the flat and the masked lambda choose differently on noise.
    @Test func trellisLambda_ReachesTheQuantizer() throws {
        let noise = TestImages.noise(width: 64, height: 64)
        let flat = try JPEGEncoder.encode(
            noise, quality: 80, quantizer: .trellis, trellisLambda: .flat, iccProfile: nil)
        let masked = try JPEGEncoder.encode(
            noise, quality: 80, quantizer: .trellis, trellisLambda: .masked, iccProfile: nil)
        let unset = try JPEGEncoder.encode(noise, quality: 80, quantizer: .trellis, iccProfile: nil)
        #expect(masked == unset)
        #expect(flat != masked)
    }
}
