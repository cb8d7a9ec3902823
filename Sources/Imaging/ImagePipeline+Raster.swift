import CResampleKernels
import Dispatch
import Foundation

/// PNG, WebP, HEIC and AVIF originals: decoded by their library (HEIF and interlaced PNG whole;
/// other PNGs a band of rows at a time; a still WebP incrementally, shrunk while decoding to the
/// preview's size when it is larger: `WebPDecoder`, decision 039), then
/// resampled and encoded exactly as a JPEG's derivatives are: Lanczos-3 to the same sizes, the
/// same progressive, mozjpeg-table JPEGs, at qualities that depend on the format
/// (`SourceEncoderSettings`), or as gray JPEGs when the picture is gray (`GrayDerivatives`, decision 069).
extension ImagePipeline {
    /// Decodes the original of `info` (probed already) and makes its derivatives.
    static func processRaster(
        fileAt path: String?, bytes: [UInt8]?, info: ImageInfo, spec: DerivativeSpec, limits: ImageLimits,
        clock: inout Stopwatch
    ) throws -> ProcessedImage {
        let plan = DerivativePlan(info: info, spec: spec)
        var primaries: Int?
        var transfer: Int?
        var (bitsPerSample, peakLuminance): (Int, Double?) = (8, nil)
        // Whether the original's transfer is one galleryd converts (PQ, HLG, linear, gammas: decision 074).
        var convertsTransfer = false
        var fileBytes: Int?
        let rows: any RasterRows
        switch info.format {
        case .png:
            // Decoded while resampled, a band of rows at a time; an interlaced file whole. A `cICP` whose
            // transfer galleryd converts (an HDR PNG) is converted as a HEIF's nclx is (decision 074).
            let png = try PNGRowDecoder.open(fileAt: path, bytes: bytes, limits: limits)
            if let cicp = png.cicp, TransferCurve(nclxTransfer: cicp.transfer) != .sRGB {
                (primaries, transfer, bitsPerSample) = (cicp.primaries, cicp.transfer, png.bitsPerSample)
                convertsTransfer = true
            }
            rows = png
        case .webp:
            // Decoded while resampled: the "decode" lap holds only libwebp's header parse.
            let file = try bytes ?? readFile(path ?? "")
            fileBytes = file.count
            rows = try WebPDecoder.rows(bytes: file, limits: limits, covering: plan.decodeTargets)
        case .heif, .avif:
            let file = try path.map { try HEIFFile(path: $0) } ?? HEIFFile(bytes: bytes ?? [])
            let nclx = file.nclx()
            (primaries, transfer) = (nclx?.primaries, nclx?.transfer)
            // A transfer galleryd converts keeps an image's bits past 8.
            convertsTransfer = transfer.map { TransferCurve(nclxTransfer: $0) != .sRGB } ?? false
            if convertsTransfer, let planar = try file.decodeKeepingBits() {
                (bitsPerSample, peakLuminance) = (planar.bitsPerSample, planar.peakLuminance)
                rows = planar
            } else {
                rows = try file.decode()
            }
        case .jpeg:
            throw ImageError.unsupportedFormat
        }
        clock.lap("decode")
        guard rows.fileSize == (info.width, info.height) else {
            throw ImageError.corrupt(
                "decoded \(rows.fileSize.width)×\(rows.fileSize.height), header said \(info.width)×\(info.height)")
        }
        // Each format's own steps from the spec's qualities (SourceEncoderSettings); a preview at
        // the original's own size has its own row, as on the JPEG path, and so do a small
        // original's two derivatives when the thumbnail is nearly the preview's size.
        let settings = SourceEncoderSettings.forSource(info.format)
        // Derivatives carry the original's RGB ICC profile, as for JPEG originals, except a plain
        // sRGB one where the format's row says so (it is what a JPEG without one means); converted
        // nclx colour is sRGB and needs none.
        // A converted transfer's light is sRGB: a PNG's ICC profile beside its `cICP` is not carried.
        let icc = compatibleProfile(convertsTransfer ? nil : info.iccProfile, channels: 4).flatMap {
            settings.omitsSRGBProfile && SRGBProfile.matches($0) ? nil : $0
        }
        let keepsSize = plan.preview.width == info.width && plan.preview.height == info.height
        let nearSize = SourceEncoderSettings.isNearSize(thumbnail: plan.thumbnail, preview: plan.preview)
        let previewQuality = settings.previewQuality(spec, keepsOriginalSize: keepsSize, nearSize: nearSize)
        let thumbnailQuality = settings.thumbnailQuality(spec, nearSize: nearSize)
        var previewTables = QuantizationTables(quality: previewQuality)
        // A downscaled preview takes Klein's table: a PNG's at the quality; a WebP's by its bits per
        // pixel, at the quality when detailed, a fractional step below when flat (decision 060).
        if !keepsSize, plan.thumbnailSource != .samePixels {
            previewTables = settings.downscaledPreviewTables(
                quality: previewQuality,
                bitsPerPixel: fileBytes.map { Double($0) * 8 / Double(info.width * info.height) })
        }
        // PNG's and WebP's thumbnails take Klein's table one quality down (decision 060).
        var thumbnailTables = settings.thumbnailTables(quality: thumbnailQuality, nearSize: nearSize)
        // A preview at the original's size may take Klein's table at a quality set by its detail
        // (decision 060), and a WebP's with a near-size thumbnail by its chroma too (064, session 20),
        // which are measured on its pixels before it is encoded; so may a downscaled HEIC's or AVIF's
        // (decision 067), whose original is decoded whole anyway.
        let klein =
            plan.thumbnailSource == .samePixels
            ? nil : keepsSize ? settings.originalSizePreviewKlein(nearSize: nearSize) : settings.downscaledPreviewKlein
        // The preview is encoded while it is resampled (colour conversion and DCT on the thread
        // of the vertical pass), unless it is the thumbnail too, or its tables depend on its
        // pixels, or it is a grey PNG's (decision 069): then its pixels are needed.
        var previewEncoder =
            plan.thumbnailSource == .samePixels || klein != nil || rows.isGray
            ? nil
            : try JPEGStreamEncoder(
                width: plan.preview.width, height: plan.preview.height, channels: 4, quality: previewQuality,
                quantizer: spec.quantizer, iccProfile: icc, tables: previewTables)
        // A streamed preview is checked for gray row by row, its luma kept while it is (decision 069,
        // session 22): a large RGB PNG or a WebP of a gray picture.
        let grayCheck =
            previewEncoder != nil && icc == nil
            ? StreamedGrayCheck(width: plan.preview.width, height: plan.preview.height) : nil
        var (previewQuantizer, thumbnailQuantizer) = (spec.quantizer, spec.quantizer)
        var (previewLambda, thumbnailLambda): (JPEGQuantizer.TrellisLambda?, JPEGQuantizer.TrellisLambda?) = (nil, nil)
        var (previewSharpening, thumbnailSharpening): (Float, Float) = (0, 0)
        let converter = RasterRowConverter(
            layout: rows.layout, nclxPrimaries: primaries, nclxTransfer: transfer, bitsPerSample: bitsPerSample,
            peakLuminance: peakLuminance)
        // The decoded original is consumed here, so it is freed before the encodes, not at the end of
        // this function: a HEIC's or AVIF's whole RGB image from libheif (6.9 MB at 1920×1200, 36.6 MB at
        // 12 MP) was held beside the kept preview and both encoders' coefficients (decision 027, session 24).
        var (keptPreview, keptThumbnail) = try resample(
            consume rows, plan: plan, converter: converter, previewEncoder: previewEncoder, grayCheck: grayCheck)
        clock.lap("resize")
        // A gray original's near-size thumbnail may take its row's own step (WebP: decision 072, session 26).
        let grayThumbnailStep =
            nearSize && keepsSize
            ? settings.grayNearSizeThumbnailStep ?? GrayDerivatives.thumbnailStep : GrayDerivatives.thumbnailStep
        // A gray original's derivatives are one-component JPEGs on their own tables (decision 069), in
        // place of the format's rules; one with an RGB profile keeps it, and its colour path. A streamed
        // gray preview's colour encode is dropped unfinished (no scans written).
        if let gray = grayCheck?.preview {
            previewEncoder = nil
            keptPreview = gray
            keptThumbnail = keptThumbnail?.grayscale()
            previewTables = GrayDerivatives.previewTables(
                spec, keepsOriginalSize: keepsSize, gradient: PreviewDetail.meanGradient(gray))
            thumbnailTables = GrayDerivatives.thumbnailTables(spec, step: grayThumbnailStep)
        } else if icc == nil, let kept = keptPreview, kept.isAchromatic() {
            keptPreview = kept.grayscale()
            keptThumbnail = keptThumbnail?.grayscale()
            previewTables = GrayDerivatives.previewTables(
                spec, keepsOriginalSize: keepsSize, gradient: PreviewDetail.meanGradient(kept))
            thumbnailTables = GrayDerivatives.thumbnailTables(spec, step: grayThumbnailStep)
        } else if let klein, let preview = keptPreview {
            let gradient = PreviewDetail.meanGradient(preview)
            let chroma = klein.measuresChroma(gradient: gradient) ? PreviewDetail.meanChroma(preview) : nil
            previewTables = klein.tables(previewQuality, gradient: gradient, meanChroma: chroma)
            // A near-size thumbnail may take its own step by the preview's detail (WebP: decision 063), and
            // by its chroma (HEIC and AVIF: decision 067, session 21).
            if nearSize, keepsSize, let rule = settings.nearSizeThumbnailKlein {
                let thumbnailChroma =
                    rule.measuresChroma(gradient: gradient) ? chroma ?? PreviewDetail.meanChroma(preview) : nil
                thumbnailTables = rule.tables(thumbnailQuality, gradient: gradient, meanChroma: thumbnailChroma)
                // A detailed one's step is lowered by vips' resampling loss where the row says so (decision 072).
                if let loss = rule.resamplingLoss, gradient >= rule.detailedGradient, let thumbnail = keptThumbnail {
                    thumbnailTables = loss.tables(
                        thumbnailQuality, detailedStep: rule.detailedStep, preview: preview,
                        thumbnail: (thumbnail.width, thumbnail.height))
                }
                if spec.quantizer == .libjpeg, let trellis = rule.trellis(gradient: gradient) {
                    thumbnailTables = rule.tables(
                        thumbnailQuality, gradient: gradient, meanChroma: thumbnailChroma, trellis: trellis)
                    (thumbnailQuantizer, thumbnailLambda) = (.trellis, trellis.lambda)
                    thumbnailSharpening = trellis.chromaSharpening
                }
            } else if !nearSize, gradient < klein.detailedGradient, spec.quantizer == .libjpeg,
                let trellis = settings.flatThumbnailTrellis
            {
                // A flat preview's thumbnail may be quantized by trellis (HEIC and AVIF: decision 063, session 22),
                // with the row's chroma sharpening (0 in every row: decision 071).
                thumbnailTables = settings.thumbnailTables(quality: thumbnailQuality, trellis: trellis)
                (thumbnailQuantizer, thumbnailLambda) = (.trellis, trellis.lambda)
                thumbnailSharpening = trellis.chromaSharpening
            }
            // A flat one may be quantized by trellis (decision 063, session 22), unless the spec names a quantizer.
            if spec.quantizer == .libjpeg, let trellis = klein.trellis(gradient: gradient) {
                previewTables = klein.tables(previewQuality, gradient: gradient, meanChroma: chroma, trellis: trellis)
                (previewQuantizer, previewLambda) = (.trellis, trellis.lambda)
                previewSharpening = trellis.chromaSharpening
            }
        }

        let (preview, thumbnail) = (keptPreview, keptThumbnail)
        // Unchecked: each is written by one task only and read after `concurrentPerform` has joined them.
        nonisolated(unsafe) var previewJPEG: Result<[UInt8], Error> = .failure(ImageError.encodeFailed("not run"))
        nonisolated(unsafe) var thumbnailJPEG: Result<[UInt8], Error> = .failure(ImageError.encodeFailed("not run"))
        // The thumbnail's dominant colour and ThumbHash, made in its task after its encode (the shorter
        // task: the preview's is the longest chain, decision 065, session 20); after the join when the
        // thumbnail is the preview.
        nonisolated(unsafe) var summary: (color: String, hash: [UInt8])?
        // Unchecked: the resampling that fed it has returned; only the preview task finishes it.
        nonisolated(unsafe) let finishingEncoder = previewEncoder
        let (previewTablesInForce, thumbnailTablesInForce) = (previewTables, thumbnailTables)
        let (previewQuantizerInForce, thumbnailQuantizerInForce) = (previewQuantizer, thumbnailQuantizer)
        let (previewLambdaInForce, thumbnailLambdaInForce) = (previewLambda, thumbnailLambda)
        let (previewSharpeningInForce, thumbnailSharpeningInForce) = (previewSharpening, thumbnailSharpening)
        DispatchQueue.concurrentPerform(iterations: thumbnail == nil ? 1 : 2) { task in
            if task == 0 {
                previewJPEG = Result {
                    if let finishingEncoder { return try finishingEncoder.finish() }
                    return try JPEGEncoder.encode(
                        preview!, quality: previewQuality, quantizer: previewQuantizerInForce,
                        trellisLambda: previewLambdaInForce, chromaSharpening: previewSharpeningInForce,
                        iccProfile: icc, tables: previewTablesInForce)
                }
            } else if let thumbnail {
                thumbnailJPEG = Result {
                    try JPEGEncoder.encode(
                        thumbnail, quality: thumbnailQuality, quantizer: thumbnailQuantizerInForce,
                        trellisLambda: thumbnailLambdaInForce, chromaSharpening: thumbnailSharpeningInForce,
                        iccProfile: icc, tables: thumbnailTablesInForce)
                }
                summary = (thumbnail.averageColorHex(), ThumbHash.encode(thumbnail))
            }
        }
        clock.lap("encode")
        let previewBytes = try previewJPEG.get()
        let thumbnailImage = thumbnail ?? preview!
        let (dominantColor, thumbHash) =
            summary ?? (thumbnailImage.averageColorHex(), ThumbHash.encode(thumbnailImage))
        return ProcessedImage(
            info: info,
            thumbnail: EncodedImage(
                jpeg: thumbnail == nil ? previewBytes : try thumbnailJPEG.get(), width: thumbnailImage.width,
                height: thumbnailImage.height),
            preview: EncodedImage(jpeg: previewBytes, width: plan.preview.width, height: plan.preview.height),
            dominantColor: dominantColor, timings: clock.laps, thumbnailSource: plan.thumbnailSource,
            thumbHash: thumbHash)
    }

    /// One pass over the decoded rows, as the decoder hands them out, into the preview's
    /// resampler (which feeds the thumbnail's when the thumbnail comes from the preview) and, for
    /// small or elongated originals, the thumbnail's own; the thumbnail is nil when it is the
    /// preview itself. With `previewEncoder` the preview's rows go into it as they are made and
    /// no preview image is kept (nil); `grayCheck` takes each of them first.
    ///
    /// When the thumbnail comes from the preview (every large original), the work is split over
    /// two threads as the JPEG path splits it: this one converts rows and runs the preview's
    /// horizontal pass, a second one (through a `RowBlockRing`) the vertical pass and the
    /// thumbnail. Otherwise one thread does it all.
    private static func resample(
        _ raster: any RasterRows, plan: DerivativePlan, converter: RasterRowConverter,
        previewEncoder: JPEGStreamEncoder?, grayCheck: StreamedGrayCheck?
    ) throws -> (preview: PixelBuffer?, thumbnail: PixelBuffer?) {
        if raster.width == plan.preview.width, raster.height == plan.preview.height, converter.isByteCopy {
            return try passDecodedRows(raster, plan: plan, previewEncoder: previewEncoder, grayCheck: grayCheck)
        }
        let fromPreview: StreamingResampler? =
            plan.thumbnailSource == .preview
            ? StreamingResampler(
                sourceWidth: plan.preview.width, sourceHeight: plan.preview.height, targetWidth: plan.thumbnail.width,
                targetHeight: plan.thumbnail.height, channels: 4) : nil
        let fromDecode: StreamingResampler? =
            plan.thumbnailSource == .decode
            ? StreamingResampler(
                sourceWidth: raster.width, sourceHeight: raster.height, targetWidth: plan.thumbnail.width,
                targetHeight: plan.thumbnail.height, channels: 4) : nil
        var encodeError: Error?
        let sink: ((UnsafeMutablePointer<UInt8>) -> Void)? = previewEncoder.map { encoder in
            { row in
                guard encodeError == nil else { return }
                grayCheck?.take(row: row)
                do { try encoder.write(row: row) } catch { encodeError = error }
            }
        }
        let split = fromDecode == nil
        let previewResampler = StreamingResampler(
            sourceWidth: raster.width, sourceHeight: raster.height, targetWidth: plan.preview.width,
            targetHeight: plan.preview.height, channels: 4, downstream: fromPreview, sink: sink,
            verticalFirst: split ? false : nil)
        let count = raster.width * 4
        let row = UnsafeMutableRawPointer.allocate(byteCount: count * MemoryLayout<Float>.stride, alignment: 64)
            .bindMemory(to: Float.self, capacity: count)
        defer { UnsafeMutableRawPointer(row).deallocate() }
        if split {
            let floats = previewResampler.horizontalRowFloats
            let ring = RowBlockRing(blocks: 4, rowsPerBlock: 16, rowBytes: 1, preparedFloats: floats)
            let consumer = ring.consume(width: 1, channels: 1) { row in
                previewResampler.push(horizontallyResampled: row.prepared!)
            }
            defer {
                ring.close()
                _ = consumer.wait()
            }
            try ring.produce(rowsOf: raster) { source, r, _, prepared in
                if previewResampler.isIdentity {
                    // The preview is the decode's size: no pass, the row converted in place.
                    converter.convert(source, width: raster.width, into: prepared! + r * floats)
                } else {
                    converter.convert(source, width: raster.width, into: row)
                    previewResampler.resampleHorizontally(row: row, into: prepared! + r * floats)
                }
            }
        } else {
            try raster.forEachRun { first, stride, count in
                for r in 0..<count {
                    converter.convert(first + r * stride, width: raster.width, into: row)
                    previewResampler.push(row: row)
                    fromDecode?.push(row: row)
                }
            }
        }
        if let encodeError { throw encodeError }
        return (sink == nil ? previewResampler.finish() : nil, fromPreview?.finish() ?? fromDecode?.finish())
    }

    /// The preview is the decoded image itself (an opaque sRGB original no larger than the
    /// preview, or a WebP that libwebp shrank to the preview's size while decoding): as on the
    /// JPEG path (decision 018), the decoded rows, made RGBX on this thread, go straight into the
    /// preview (its streaming encoder, or its image) and the thumbnail's resampler (as bytes when
    /// it goes vertical first) on a second one: no identity resampling, no round trip through
    /// floats, the same bytes (decision 065).
    private static func passDecodedRows(
        _ raster: any RasterRows, plan: DerivativePlan, previewEncoder: JPEGStreamEncoder?,
        grayCheck: StreamedGrayCheck?
    ) throws -> (preview: PixelBuffer?, thumbnail: PixelBuffer?) {
        let (width, height) = (raster.width, raster.height)
        let rowBytes = width * 4
        let avx2 = StreamingResampler.avx2
        let thumbnail: StreamingResampler? =
            plan.thumbnailSource == .samePixels
            ? nil
            : StreamingResampler(
                sourceWidth: width, sourceHeight: height, targetWidth: plan.thumbnail.width,
                targetHeight: plan.thumbnail.height, channels: 4, byteRows: true)
        // Unchecked: written by the consumer thread only, read after it has been waited for.
        nonisolated(unsafe) var image = previewEncoder == nil ? [UInt8](repeating: 0, count: rowBytes * height) : []
        nonisolated(unsafe) var encodeError: Error?
        nonisolated(unsafe) var rowsTaken = 0
        let ring = RowBlockRing(blocks: 4, rowsPerBlock: 16, rowBytes: rowBytes)
        let consumer = ring.consume(width: width, channels: 4) { row in
            if let previewEncoder {
                if encodeError == nil {
                    grayCheck?.take(row: row.bytes)
                    do { try previewEncoder.write(row: UnsafeMutablePointer(mutating: row.bytes)) } catch {
                        encodeError = error
                    }
                }
            } else {
                image.withUnsafeMutableBufferPointer { out in
                    (out.baseAddress! + rowsTaken * rowBytes).update(from: row.bytes, count: rowBytes)
                }
            }
            rowsTaken += 1
            guard let thumbnail else { return }
            if let slot = thumbnail.nextByteRowSlot {
                slot.update(from: row.bytes, count: rowBytes)
                thumbnail.commitRow()
            } else {
                RowConverter.widen(row.bytes, count: rowBytes, into: row.floats)
                thumbnail.push(row: row.floats)
            }
        }
        do {
            defer {
                ring.close()
                _ = consumer.wait()
            }
            try ring.produce(rowsOf: raster) { source, r, rows, _ in gd_rgb_to_rgbx(source, width, rows[r]!, avx2) }
        }
        if let encodeError { throw encodeError }
        return (
            previewEncoder == nil ? PixelBuffer(width: width, height: height, channels: 4, bytes: image) : nil,
            thumbnail?.finish()
        )
    }

    /// The whole file (WebP is decoded from memory).
    static func readFile(_ path: String) throws -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path) else { throw ImageError.io("\(path): cannot read") }
        return [UInt8](data)
    }
}
