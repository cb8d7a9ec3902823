import CJPEG
import CJPEGShim

/// Encodes pixels the way mozjpeg does by default, with plain libjpeg-turbo: progressive with a
/// mozjpeg-style scan script, optimized Huffman tables, accurate integer DCT, 4:2:0 chroma and
/// N. Robidoux's quantization table (mozjpeg's table set 3) for luma and chroma, scaled by
/// quality like libjpeg — the chroma copy at `chromaQuality(for:)`, a few steps above, and the
/// luma DC step finer (`QuantizationTables`). No metadata is written except an ICC profile when
/// given.
///
/// One choice beyond mozjpeg's defaults (besides the DC step), measured with SSIMULACRA2 against
/// a Lanczos downscale of the original on the bench photos (bench/imaging.sh): chroma at quality
/// + 3. The metric weighs colour errors heavily, and at 80 the chroma DC step drops from 6 to 5:
/// +0.6 mean score for 1.5% more bytes, a better trade than raising the luma quality (+1: +0.35
/// for 1.6% on a subset) and the best balance of +1…+5 (+5: +0.7 for 2.3%, leaving too little of
/// the 9% size margin over vips).
///
/// Measured and left out: averaging each 2×2 chroma block in linear light instead of on
/// gamma-encoded values (+0.07 mean for no bytes, but done in C before libjpeg it cost 10% of
/// the wall time); libjpeg's `jpeg_simple_progression` script (0.5% more bytes than ours);
/// a mild unsharp mask after resampling (−0.14 at 1.5% more bytes); box chroma downsampling
/// beats Lanczos or bilinear chroma; sharp-YUV-style iterative chroma (+0.28 for 1.25% bytes,
/// no better than raising the quality).
enum JPEGEncoder {
    /// mozjpeg's default quantization table (jcparam.c, set 3 "ImageMagick table by N. Robidoux"),
    /// natural order. Gentler than Annex K on low frequencies, harsher on the highest ones.
    static let robidouxTable: [UInt32] = [
        16, 16, 16, 18, 25, 37, 56, 85,
        16, 17, 20, 27, 34, 40, 53, 75,
        16, 20, 24, 31, 43, 62, 91, 135,
        18, 27, 31, 40, 53, 74, 106, 156,
        25, 34, 43, 53, 69, 94, 131, 189,
        37, 40, 62, 74, 94, 124, 169, 238,
        56, 53, 91, 106, 131, 169, 226, 311,
        85, 75, 135, 156, 189, 238, 311, 418,
    ]

    /// How far above the luma quality the chroma table is scaled (see the type's comment).
    static let chromaQualityBoost = 3

    /// The quality the chroma copy of the table is scaled at: `quality` + `chromaQualityBoost`, at most 100.
    static func chromaQuality(for quality: Int) -> Int {
        min(max(quality, 1) + chromaQualityBoost, 100)
    }

    /// The fixed progressive scan script for YCbCr (every derivative is written with it first, then
    /// its scans are chosen per image: `JPEGScanChoice`), after mozjpeg's max-compression script (jcparam.c
    /// jpeg_simple_progression, from jpgcrush): one DC scan, the low AC bands first, chroma in
    /// two bands. Luma uses one level of successive approximation instead of mozjpeg's two: on
    /// the bench photos that is 0.15% more bytes for 16% less encoding time, since every
    /// refinement scan is another two passes (statistics, then output) over all luma blocks.
    static let colorScans: [jpeg_scan_info] = [
        scan([0, 1, 2], 0, 0, 0, 0),
        scan([0], 1, 8, 0, 1),
        scan([1], 1, 8, 0, 0),
        scan([2], 1, 8, 0, 0),
        scan([0], 9, 63, 0, 1),
        scan([0], 1, 63, 1, 0),
        scan([1], 9, 63, 0, 0),
        scan([2], 9, 63, 0, 0),
    ]

    /// The same idea for one component.
    static let grayScans: [jpeg_scan_info] = [
        scan([0], 0, 0, 0, 0),
        scan([0], 1, 8, 0, 1),
        scan([0], 9, 63, 0, 1),
        scan([0], 1, 63, 1, 0),
    ]

    static func scan(_ components: [Int32], _ ss: Int32, _ se: Int32, _ ah: Int32, _ al: Int32)
        -> jpeg_scan_info
    {
        var info = jpeg_scan_info()
        info.comps_in_scan = Int32(components.count)
        withUnsafeMutableBytes(of: &info.component_index) { raw in
            let slots = raw.bindMemory(to: Int32.self)
            for (index, component) in components.enumerated() { slots[index] = component }
        }
        info.Ss = ss
        info.Se = se
        info.Ah = ah
        info.Al = al
        return info
    }

    /// Encodes an RGBX or gray buffer at `quality` (1…100), embedding `iccProfile` when given;
    /// with `tables`, or our tables at `quality` (`QuantizationTables`). The scans are the fixed
    /// script's, then chosen per image (`JPEGScanChoice`) unless `optimizeScans` is false.
    /// `trellisLambda` is trellis' (nil: `.masked`), used only with `quantizer` `.trellis`; `zeroBias`
    /// the dead zone of `.zeroBias` (nil: `ZeroBias.standard`). `chromaSharpening` k > 0 sharpens the
    /// downsampled chroma against the decoders' triangle upsampling (each sample h + k (4h − its four
    /// neighbours) / 8, decision 071) on the coefficient path (`libjpeg` then rounds as `rounding`).
    static func encode(
        _ image: PixelBuffer, quality: Int, quantizer: JPEGQuantizer = .libjpeg,
        trellisLambda: JPEGQuantizer.TrellisLambda? = nil, zeroBias: JPEGQuantizer.ZeroBias? = nil,
        chromaSharpening: Float = 0, iccProfile: [UInt8]?,
        tables: QuantizationTables? = nil, optimizeScans: Bool = true
    ) throws -> [UInt8] {
        let gray = image.channels == 1
        let scans = gray ? grayScans : colorScans
        // The scans chosen from the compressor's own coefficients as it finishes (JPEGScanChoice).
        let plan = optimizeScans ? JPEGScanChoice.plan(gray: gray, width: image.width, height: image.height) : nil
        return try encode(
            image, inputColorSpace: gray ? JCS_GRAYSCALE : JCS_EXT_RGBX,
            jpegColorSpace: gray ? JCS_GRAYSCALE : JCS_YCbCr, quality: quality, quantTable: nil, scans: scans,
            subsampleChroma: true, writeAdobe: false, quantizer: quantizer, trellisLambda: trellisLambda,
            zeroBias: zeroBias, chromaSharpening: chromaSharpening, iccProfile: iccProfile,
            tables: tables ?? QuantizationTables(quality: quality, gray: gray),
            scanChoice: plan)
    }

    /// The general form, also used by tests to write CMYK, baseline or libjpeg-table files.
    /// `chromaQuality` scales `quantTable`'s chroma copy (nil: `quality`); `tables`, when given,
    /// are used as they are instead. With `scanChoice` the file is written with its first script
    /// (`scans` must be it) and its scans are chosen (`JPEGScanChoice.plan`).
    static func encode(
        _ image: PixelBuffer, inputColorSpace: J_COLOR_SPACE, jpegColorSpace: J_COLOR_SPACE, quality: Int,
        chromaQuality: Int? = nil, quantTable: [UInt32]?, scans: [jpeg_scan_info]?, subsampleChroma: Bool,
        writeAdobe: Bool, quantizer: JPEGQuantizer = .libjpeg, trellisLambda: JPEGQuantizer.TrellisLambda? = nil,
        zeroBias: JPEGQuantizer.ZeroBias? = nil, chromaSharpening: Float = 0, iccProfile: [UInt8]?,
        tables: QuantizationTables? = nil, scanChoice: (scripts: [[jpeg_scan_info]], probedMaxBytes: UInt)? = nil
    ) throws -> [UInt8] {
        guard image.width > 0, image.height > 0 else { throw ImageError.encodeFailed("empty image") }
        var output: UnsafeMutablePointer<UInt8>?
        var length: UInt = 0
        var message = [CChar](repeating: 0, count: 256)
        // The final steps, luma then chroma (then Cr's own, when it has them), in one buffer.
        let steps = tables?.steps
        let status: gd_status = image.bytes.withUnsafeBufferPointer { pixels in
            withOptionalBuffer(quantTable) { table in
                withOptionalBuffer(scans) { scanInfo in
                    withOptionalBuffer(iccProfile) { icc in
                        withOptionalBuffer(steps) { steps in
                            var request = gd_encode_request()
                            request.pixels = pixels.baseAddress
                            request.width = UInt32(image.width)
                            request.height = UInt32(image.height)
                            request.stride = image.stride
                            request.input_components = Int32(image.channels)
                            request.input_color_space = inputColorSpace
                            request.jpeg_color_space = jpegColorSpace
                            request.quality = Int32(min(max(quality, 1), 100))
                            request.quant_table = table?.baseAddress
                            request.scans = scanInfo?.baseAddress
                            request.scan_count = Int32(scanInfo?.count ?? 0)
                            request.chroma_quality = Int32(min(max(chromaQuality ?? quality, 1), 100))
                            request.chroma_subsampling = subsampleChroma ? 1 : 0
                            request.optimize_coding = 1
                            request.write_jfif =
                                jpegColorSpace == JCS_YCbCr || jpegColorSpace == JCS_GRAYSCALE ? 1 : 0
                            request.write_adobe = writeAdobe ? 1 : 0
                            request.icc = icc?.baseAddress
                            request.icc_length = UInt32(icc?.count ?? 0)
                            request.quantizer = quantizer.shimValue
                            if let trellisLambda {
                                request.trellis_lambda_log_scale1 = trellisLambda.logScale1
                                request.trellis_lambda_log_scale2 = trellisLambda.logScale2
                            }
                            if quantizer == .zeroBias { (zeroBias ?? .standard).apply(to: &request) }
                            request.chroma_sharpening = chromaSharpening
                            if let steps {
                                request.luma_table = steps.baseAddress
                                if steps.count >= 128 { request.chroma_table = steps.baseAddress! + 64 }
                                if steps.count == 192 { request.cr_table = steps.baseAddress! + 128 }
                            }
                            guard let scanChoice else {
                                return gd_encode(&request, &output, &length, &message, message.count)
                            }
                            return JPEGScanChoice.withProbes(scanChoice.scripts) { probes in
                                request.probes = probes.baseAddress
                                request.probe_count = Int32(probes.count)
                                request.probed_max_bytes = scanChoice.probedMaxBytes
                                return gd_encode(&request, &output, &length, &message, message.count)
                            }
                        }
                    }
                }
            }
        }
        guard status == GD_OK, let output else {
            throw ImageError.encodeFailed(message.withUnsafeBufferPointer { String(cString: $0.baseAddress!) })
        }
        defer { gd_free(output) }
        return Array(UnsafeBufferPointer(start: output, count: Int(length)))
    }

    private static func withOptionalBuffer<T, R>(_ array: [T]?, _ body: (UnsafeBufferPointer<T>?) -> R) -> R {
        guard let array else { return body(nil) }
        return array.withUnsafeBufferPointer { body($0) }
    }
}
