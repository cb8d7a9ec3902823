import CJPEG
import CJPEGShim

/// A JPEG compressor fed one row at a time, so a preview can be encoded while it is still being
/// resampled, without ever holding its pixels: libjpeg (or the shim's coefficient path, see
/// `JPEGQuantizer`) does colour conversion and the DCT as rows arrive, and the progressive
/// scans at `finish()`. Same settings as `JPEGEncoder.encode`, the scans chosen per image as there
/// (`JPEGScanChoice`): after the compressor has freed its coefficients, so the peak is the same.
///
/// Used from one thread at a time (rows on the resampling thread, `finish` after it is joined).
final class JPEGStreamEncoder {
    private let handle: OpaquePointer
    private let request: UnsafeMutablePointer<gd_encode_request>
    private let scans: UnsafeMutableBufferPointer<jpeg_scan_info>
    private let table: UnsafeMutableBufferPointer<UInt32>
    private let rowHeight: Int
    private let rowWidth: Int
    private let gray: Bool
    private let optimizeScans: Bool
    private var rowsWritten = 0

    /// Starts a progressive, Huffman-optimized JPEG of `width`×`height` RGBX (4) or gray (1) pixels.
    init(
        width: Int, height: Int, channels: Int, quality: Int, quantizer: JPEGQuantizer = .libjpeg,
        iccProfile: [UInt8]?, tables: QuantizationTables? = nil, optimizeScans: Bool = true
    ) throws {
        guard let handle = gd_encoder_create() else { throw ImageError.encodeFailed("cannot create a compressor") }
        self.handle = handle
        rowHeight = height
        rowWidth = width
        let gray = channels == 1
        self.gray = gray
        self.optimizeScans = optimizeScans
        let script = gray ? JPEGEncoder.grayScans : JPEGEncoder.colorScans
        scans = .allocate(capacity: script.count)
        _ = scans.initialize(from: script)
        // The luma, the chroma and Cr's own steps (64 each, Cr's when it has them): `tables`, or ours at `quality`.
        let steps = tables ?? QuantizationTables(quality: quality, gray: gray)
        table = .allocate(capacity: 192)
        _ = table.initialize(from: steps.steps)
        request = .allocate(capacity: 1)
        var r = gd_encode_request()
        r.width = UInt32(width)
        r.height = UInt32(height)
        r.stride = width * channels
        r.input_components = Int32(channels)
        r.input_color_space = gray ? JCS_GRAYSCALE : JCS_EXT_RGBX
        r.jpeg_color_space = gray ? JCS_GRAYSCALE : JCS_YCbCr
        r.quality = Int32(min(max(quality, 1), 100))
        r.scans = UnsafePointer(scans.baseAddress)
        r.scan_count = Int32(scans.count)
        r.chroma_subsampling = 1
        r.optimize_coding = 1
        r.write_jfif = 1
        r.quantizer = quantizer.shimValue
        if quantizer == .zeroBias { JPEGQuantizer.ZeroBias.standard.apply(to: &r) }
        r.luma_table = UnsafePointer(table.baseAddress)
        if steps.chroma != nil { r.chroma_table = UnsafePointer(table.baseAddress! + 64) }
        if steps.cr != nil { r.cr_table = UnsafePointer(table.baseAddress! + 128) }
        request.initialize(to: r)
        let status: gd_status =
            if let iccProfile, !iccProfile.isEmpty {
                iccProfile.withUnsafeBufferPointer { icc in
                    request.pointee.icc = icc.baseAddress
                    request.pointee.icc_length = UInt32(icc.count)
                    defer {
                        request.pointee.icc = nil
                        request.pointee.icc_length = 0
                    }
                    return gd_encoder_start(handle, request)
                }
            } else {
                gd_encoder_start(handle, request)
            }
        try check(status)
    }

    deinit {
        gd_encoder_destroy(handle)
        request.deallocate()
        scans.deallocate()
        table.deallocate()
    }

    /// Compresses the next row.
    func write(row: UnsafeMutablePointer<UInt8>) throws {
        var pointer: UnsafeMutablePointer<UInt8>? = row
        try check(gd_encoder_write_rows(handle, &pointer, 1))
        rowsWritten += 1
    }

    /// Compresses the next `count` rows.
    func write(rows: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>, count: Int) throws {
        try check(gd_encoder_write_rows(handle, rows, UInt32(count)))
        rowsWritten += count
    }

    /// Writes the progressive scans and returns the file.
    /// Whether `finish()` wrote the scan choice's probes from the compressor's own coefficients
    /// (it does whenever it tries a probe) rather than from the file read back.
    var choseScansFromCoefficients: Bool { gd_encoder_chose_from_coefficients(handle) != 0 }

    /// Whether `finish()` wrote those probes on a second thread while it finished the file (it does
    /// for a file likely to be probed: a thumbnail, or a preview whose coefficients promise a file
    /// under `JPEGScanChoice.probedMaxBytes`).
    var wroteProbesBesideTheFinish: Bool { gd_encoder_chose_from_coefficients(handle) == 2 }

    /// Starts the probes beside the finish for a preview whose nonzero AC coefficients are at most
    /// `probedMaxBytes` × `tenths` / 10 (11 unless set): for tests, a large value starts them for
    /// every preview, and they are cancelled when the file outgrows the limit.
    func setProbeSpeculation(tenths: Int) { gd_encoder_set_speculation(handle, Int32(tenths)) }

    func finish() throws -> [UInt8] {
        guard rowsWritten == rowHeight else {
            throw ImageError.encodeFailed("\(rowsWritten) of \(rowHeight) rows written")
        }
        var output: UnsafeMutablePointer<UInt8>?
        var length: UInt = 0
        if optimizeScans {
            // The scans chosen from the compressor's own coefficients as it finishes (JPEGScanChoice).
            let plan = JPEGScanChoice.plan(gray: gray, width: rowWidth, height: rowHeight)
            try check(
                JPEGScanChoice.withProbes(plan.scripts) { probes in
                    gd_encoder_finish_choosing(
                        handle, probes.baseAddress, Int32(probes.count), plan.probedMaxBytes, &output, &length)
                })
        } else {
            try check(gd_encoder_finish(handle, &output, &length))
        }
        guard let output else { throw ImageError.encodeFailed("no output") }
        defer { gd_free(output) }
        return Array(UnsafeBufferPointer(start: output, count: Int(length)))
    }

    private func check(_ status: gd_status) throws {
        guard status != GD_OK else { return }
        throw ImageError.encodeFailed(String(cString: gd_encoder_message(handle)))
    }
}
