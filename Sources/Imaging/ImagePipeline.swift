import CJPEG
import Dispatch
import Foundation

/// Turns an original into its thumbnail and preview with one decode. JPEGs take the path
/// described here; PNG, WebP, HEIC and AVIF originals are decoded whole by their library and
/// share the resampler and encoder (`ImagePipeline+Raster`).
///
/// Probe the header (limits checked before any decoding) → decode at the DCT scale the plan
/// chose, row by row, straight into streaming Lanczos-3 resamplers that store their rows
/// upright (EXIF orientation) → progressive, Huffman-optimized JPEGs with mozjpeg's tables.
/// Every call owns its libjpeg objects and buffers, so concurrent calls from several workers
/// are safe.
///
/// Each call uses two threads: the caller's runs libjpeg's decoder, a short-lived second thread
/// resamples (and, for upright images, feeds the preview encoder); then both derivatives are
/// encoded side by side. Timings: `decode` is libjpeg's decoding, `resize` the second thread's
/// work (resampling plus the streamed preview's DCT), `encodePreview`/`encodeThumbnail` what is
/// left of each encode, `encode` their wall time together.
public enum ImagePipeline {
    /// Processes the image file at `path`.
    public static func process(
        fileAt path: String, spec: DerivativeSpec = DerivativeSpec(), limits: ImageLimits = ImageLimits()
    ) throws -> ProcessedImage {
        var clock = Stopwatch()
        let info = try ImageProbe.probe(fileAt: path, limits: limits)
        clock.lap("probe")
        guard info.format == .jpeg else {
            return try processRaster(fileAt: path, bytes: nil, info: info, spec: spec, limits: limits, clock: &clock)
        }
        return try run(info: info, spec: spec, clock: &clock) {
            try JPEGDecoder(path: path, maxScans: limits.maxScans)
        }
    }

    /// Processes an in-memory image.
    public static func process(
        bytes: [UInt8], spec: DerivativeSpec = DerivativeSpec(), limits: ImageLimits = ImageLimits()
    ) throws -> ProcessedImage {
        var clock = Stopwatch()
        let info = try ImageProbe.probe(bytes: bytes, limits: limits)
        clock.lap("probe")
        guard info.format == .jpeg else {
            return try processRaster(fileAt: nil, bytes: bytes, info: info, spec: spec, limits: limits, clock: &clock)
        }
        return try run(info: info, spec: spec, clock: &clock) {
            try JPEGDecoder(bytes: bytes, maxScans: limits.maxScans)
        }
    }

    private static func run(
        info: ImageInfo, spec: DerivativeSpec, clock: inout Stopwatch, makeDecoder: () throws -> JPEGDecoder
    ) throws -> ProcessedImage {
        let plan = DerivativePlan(info: info, spec: spec)
        let icc = compatibleProfile(info.iccProfile, channels: info.components == 1 ? 1 : 4)
        // A preview at the original's own size re-encodes its blocks: a little higher quality, and
        // quantized on the original's steps where the grids line up (QuantizationTables).
        let gray = info.components == 1
        let keepsSize = plan.preview.width == info.width && plan.preview.height == info.height
        let previewQuality = spec.previewQuality(keepsOriginalSize: keepsSize)
        let previewTables =
            (keepsSize ? QuantizationTables(aligningTo: info, quality: previewQuality) : nil)
            ?? QuantizationTables(quality: previewQuality, gray: gray)
        let thumbnailTables = QuantizationTables(
            quality: spec.effectiveThumbnailQuality, gray: gray, chromaBoost: DerivativeSpec.thumbnailChromaQualityBoost
        )
        // Orientations that keep the row order (1, and 2 which mirrors each row) let the preview be
        // encoded while it is produced; the others need the whole image to turn it.
        let streamsPreview = info.orientation <= 2 && plan.thumbnailSource != .samePixels
        let streamEncoder =
            streamsPreview
            ? try JPEGStreamEncoder(
                width: plan.preview.width, height: plan.preview.height, channels: info.components == 1 ? 1 : 4,
                quality: previewQuality, quantizer: spec.quantizer, iccProfile: icc, tables: previewTables) : nil
        let decoded = try decodeAndResample(
            info: info, plan: plan, previewEncoder: streamEncoder, clock: &clock, makeDecoder: makeDecoder)

        // The resamplers already wrote both images upright.
        let thumbnail = decoded.thumbnail ?? decoded.preview!
        let preview = decoded.preview
        let dominantColor = thumbnail.averageColorHex()
        let thumbHash = ThumbHash.encode(thumbnail)

        // The preview's scans and the thumbnail are encoded on two threads. Unchecked: each
        // variable is written by one task only and read after `concurrentPerform` has joined them.
        nonisolated(unsafe) var previewJPEG: Result<[UInt8], Error> = .failure(ImageError.encodeFailed("not run"))
        nonisolated(unsafe) var thumbnailJPEG: Result<[UInt8], Error> = .failure(ImageError.encodeFailed("not run"))
        nonisolated(unsafe) var previewTime: UInt64 = 0
        nonisolated(unsafe) var thumbnailTime: UInt64 = 0
        // Unchecked: the decode that fed it has returned; only the preview task finishes it.
        nonisolated(unsafe) let finishingEncoder = streamEncoder
        let encodeThumbnail = plan.thumbnailSource != .samePixels
        DispatchQueue.concurrentPerform(iterations: encodeThumbnail ? 2 : 1) { task in
            let start = Stopwatch.nanoseconds()
            if task == 0 {
                previewJPEG = Result {
                    if let finishingEncoder { return try finishingEncoder.finish() }
                    return try JPEGEncoder.encode(
                        preview!, quality: previewQuality, quantizer: spec.quantizer, iccProfile: icc,
                        tables: previewTables)
                }
                previewTime = Stopwatch.nanoseconds() - start
            } else {
                thumbnailJPEG = Result {
                    try JPEGEncoder.encode(
                        thumbnail, quality: spec.effectiveThumbnailQuality, quantizer: spec.quantizer,
                        iccProfile: icc, tables: thumbnailTables)
                }
                thumbnailTime = Stopwatch.nanoseconds() - start
            }
        }
        clock.lap("encode")
        clock.record("encodePreview", nanoseconds: previewTime)
        clock.record("encodeThumbnail", nanoseconds: thumbnailTime)
        let previewBytes = try previewJPEG.get()
        let thumbnailBytes = encodeThumbnail ? try thumbnailJPEG.get() : previewBytes
        return ProcessedImage(
            info: info,
            thumbnail: EncodedImage(jpeg: thumbnailBytes, width: thumbnail.width, height: thumbnail.height),
            preview: EncodedImage(
                jpeg: previewBytes, width: info.orientationSwapsAxes ? plan.preview.height : plan.preview.width,
                height: info.orientationSwapsAxes ? plan.preview.width : plan.preview.height),
            dominantColor: dominantColor, timings: clock.laps, thumbnailSource: plan.thumbnailSource,
            thumbHash: thumbHash)
    }

    /// One pass over the decoded rows: this thread runs libjpeg while a second thread converts
    /// and resamples the rows it has finished (a small ring of row blocks between them), so
    /// decoding and resampling overlap on two cores. With `previewEncoder` the preview rows go
    /// straight into it (mirrored for orientation 2) and no preview image is kept.
    private static func decodeAndResample(
        info: ImageInfo, plan: DerivativePlan, previewEncoder: JPEGStreamEncoder?, clock: inout Stopwatch,
        makeDecoder: () throws -> JPEGDecoder
    ) throws -> (preview: PixelBuffer?, thumbnail: PixelBuffer?) {
        let openTime = Stopwatch.nanoseconds()
        let decoder = try makeDecoder()
        try decoder.readHeader()
        let format = JPEGDecoder.OutputFormat(for: info.colorSpace)
        let size = try decoder.start(scale: plan.scale, format: format)
        // jpeg_start_decompress reads all of a progressive file, so decoding time starts at open.
        var decodeTime = Stopwatch.nanoseconds() - openTime

        let converter = RowConverter(format: format, invertedCMYK: info.hasAdobeMarker)
        let channels = converter.channels
        // When the preview is the decoded image itself (an RGB or gray original no larger than the
        // preview), this thread hands the decoded rows straight to the preview — to the streaming
        // encoder, or turned into place for the orientations that cannot stream — and the other
        // thread only makes the thumbnail: no identity resampling, no round trip through floats,
        // and the encoder's DCT runs on the thread that otherwise waits for the resampler
        // (docs/decisions/018-imaging-time-against-vips.md).
        let previewIsDecode =
            format != .cmyk && size.width == plan.preview.width && size.height == plan.preview.height
        // The resampler that takes the decoded rows keeps them as bytes (if it goes vertical
        // first): RGBX and gray rows need no conversion, only CMYK does.
        let keepsBytes = format != .cmyk
        let fromPreview: StreamingResampler? =
            plan.thumbnailSource == .preview
            ? StreamingResampler(
                sourceWidth: plan.preview.width, sourceHeight: plan.preview.height,
                targetWidth: plan.thumbnail.width, targetHeight: plan.thumbnail.height, channels: channels,
                orientation: info.orientation, byteRows: previewIsDecode && keepsBytes) : nil
        let fromDecode: StreamingResampler? =
            plan.thumbnailSource == .decode
            ? StreamingResampler(
                sourceWidth: size.width, sourceHeight: size.height, targetWidth: plan.thumbnail.width,
                targetHeight: plan.thumbnail.height, channels: channels, orientation: info.orientation) : nil
        var encodeError: Error?
        let sink: ((UnsafeMutablePointer<UInt8>) -> Void)? = previewEncoder.map { encoder in
            let mirror = info.orientation == 2
            let width = plan.preview.width
            return { row in
                guard encodeError == nil else { return }
                if mirror { ImageOrientation.mirror(row: row, width: width, channels: channels) }
                do { try encoder.write(row: row) } catch { encodeError = error }
            }
        }
        let directEncoder = previewIsDecode ? previewEncoder : nil
        let directWriter =
            previewIsDecode && previewEncoder == nil
            ? OrientedRowWriter(
                width: size.width, height: size.height, channels: channels, orientation: info.orientation)
            : nil
        let mirrorRow: UnsafeMutablePointer<UInt8>? =
            directEncoder != nil && info.orientation == 2 ? .allocate(capacity: size.width * channels) : nil
        defer { mirrorRow?.deallocate() }
        // Otherwise, when nothing but the preview needs the decoded rows and decoding is cheap (a
        // baseline original decoded at no more than twice the preview's pixels, such as 2560×1600
        // for 2048×1280), the preview's horizontal pass runs on this thread too: it has time to
        // spare while the other thread does the vertical pass, the thumbnail and the encoder's DCT
        // (mate_Wood 85 → 65 ms). A large or progressive decode already keeps this thread busy
        // (kleiber at full size: 145 → 187 ms with the split).
        let splitPasses =
            !previewIsDecode && fromDecode == nil && !info.isProgressive
            && size.width * size.height <= 2 * plan.preview.width * plan.preview.height
        let previewResampler: StreamingResampler? =
            previewIsDecode
            ? nil
            : StreamingResampler(
                sourceWidth: size.width, sourceHeight: size.height, targetWidth: plan.preview.width,
                targetHeight: plan.preview.height, channels: channels, downstream: fromPreview, sink: sink,
                orientation: previewEncoder == nil ? info.orientation : 1,
                verticalFirst: splitPasses ? false : nil, byteRows: keepsBytes && fromDecode == nil)
        let firstResampler = previewResampler ?? fromPreview
        let splitResampler = splitPasses ? previewResampler : nil
        let decodedFloats: UnsafeMutablePointer<Float>? =
            splitPasses
            ? UnsafeMutableRawPointer.allocate(
                byteCount: size.width * channels * MemoryLayout<Float>.stride, alignment: 64
            ).bindMemory(to: Float.self, capacity: size.width * channels) : nil
        defer { decodedFloats.map { UnsafeMutableRawPointer($0).deallocate() } }

        let ring = RowBlockRing(
            blocks: 4, rowsPerBlock: 16, rowBytes: size.width * format.bytesPerPixel,
            preparedFloats: splitResampler?.horizontalRowFloats ?? 0)
        let consumer = ring.consume(width: size.width, channels: channels) { row in
            if let splitResampler, let prepared = row.prepared {
                splitResampler.push(horizontallyResampled: prepared)
                return
            }
            guard firstResampler != nil || fromDecode != nil else { return }
            // One resampler holding source rows: the bytes copied into its ring, or (CMYK)
            // converted straight into it.
            if fromDecode == nil, let firstResampler, let slot = firstResampler.nextByteRowSlot {
                slot.update(from: row.bytes, count: size.width * channels)
                firstResampler.commitRow()
                return
            }
            if fromDecode == nil, let firstResampler, let slot = firstResampler.nextRowSlot {
                converter.convert(row.bytes, width: size.width, into: slot)
                firstResampler.commitRow()
                return
            }
            converter.convert(row.bytes, width: size.width, into: row.floats)
            firstResampler?.push(row: row.floats)
            fromDecode?.push(row: row.floats)
        }
        var decodedRows = 0
        var previewRowsTime: UInt64 = 0
        do {
            while decodedRows < size.height {
                let t0 = Stopwatch.nanoseconds()
                let count = try ring.produce { rows, prepared, capacity in
                    let count = try decoder.readScanlines(into: rows, count: capacity)
                    if let splitResampler, let prepared, let decodedFloats {
                        let floats = splitResampler.horizontalRowFloats
                        for r in 0..<count {
                            converter.convert(rows[r]!, width: size.width, into: decodedFloats)
                            splitResampler.resampleHorizontally(row: decodedFloats, into: prepared + r * floats)
                        }
                    }
                    let t1 = Stopwatch.nanoseconds()
                    if let directEncoder, let mirrorRow {
                        for r in 0..<count {
                            mirrorRow.update(from: rows[r]!, count: size.width * channels)
                            ImageOrientation.mirror(row: mirrorRow, width: size.width, channels: channels)
                            try directEncoder.write(row: mirrorRow)
                        }
                    } else if let directEncoder {
                        try directEncoder.write(rows: rows, count: count)
                    } else if let directWriter {
                        directWriter.write(rows: rows, count: count)
                    }
                    if previewIsDecode { previewRowsTime += Stopwatch.nanoseconds() - t1 }
                    return count
                }
                decodeTime += Stopwatch.nanoseconds() - t0
                guard count > 0 else { throw ImageError.decodeFailed("decoder returned no rows") }
                decodedRows += count
            }
            let t0 = Stopwatch.nanoseconds()
            try decoder.finish()
            decodeTime += Stopwatch.nanoseconds() - t0
        } catch {
            ring.close()
            _ = consumer.wait()
            throw error
        }
        ring.close()
        let resizeTime = consumer.wait()
        if let encodeError { throw encodeError }
        clock.record("decode", nanoseconds: decodeTime - previewRowsTime)
        clock.record("resize", nanoseconds: resizeTime)
        if previewIsDecode { clock.record("previewRows", nanoseconds: previewRowsTime) }
        let thumbnail = fromPreview?.finish() ?? fromDecode?.finish()
        return (previewEncoder == nil ? directWriter?.finish() ?? previewResampler?.finish() : nil, thumbnail)
    }

    /// Resamples a whole buffer (used for the thumbnail from the preview's pixels).
    static func resample(_ image: PixelBuffer, width: Int, height: Int) -> PixelBuffer {
        let resampler = StreamingResampler(
            sourceWidth: image.width, sourceHeight: image.height, targetWidth: width, targetHeight: height,
            channels: image.channels)
        let count = image.width * image.channels
        let floatRow = UnsafeMutableRawPointer.allocate(byteCount: count * MemoryLayout<Float>.stride, alignment: 64)
            .bindMemory(to: Float.self, capacity: count)
        defer { UnsafeMutableRawPointer(floatRow).deallocate() }
        image.bytes.withUnsafeBufferPointer { bytes in
            for y in 0..<image.height {
                RowConverter.widen(bytes.baseAddress! + y * count, count: count, into: floatRow)
                resampler.push(row: floatRow)
            }
        }
        return resampler.finish()
    }

    /// The ICC profile if it describes the colour space we write ('RGB ' or 'GRAY', ICC.1 §7.2.6);
    /// a CMYK profile no longer applies once the pixels are converted to RGB.
    static func compatibleProfile(_ profile: [UInt8]?, channels: Int) -> [UInt8]? {
        guard let profile, profile.count >= 128 else { return nil }
        let space = Array(profile[16..<20])
        let expected: [UInt8] = channels == 1 ? Array("GRAY".utf8) : Array("RGB ".utf8)
        return space == expected ? profile : nil
    }
}
