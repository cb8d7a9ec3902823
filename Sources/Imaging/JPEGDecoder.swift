import CJPEG
import CJPEGShim

/// Owns one libjpeg decompressor (through the C shim's setjmp guard) and hands out scanlines,
/// optionally scaled in the DCT domain (`scale/8`, ITU T.81 decoders may skip high frequencies).
///
/// A progressive colour file of at least `twoThreadMinimumBytes` has its scans decoded on two
/// threads before the first row (the shim's `gd_decoder_start`, decision 055); its rows and errors
/// are those of the one-thread decode.
///
/// Not shared between threads: each `ImagePipeline.process` call makes its own.
final class JPEGDecoder {
    /// The smallest progressive colour file whose scans are decoded on two threads: below it the
    /// second thread's start and the split cost more than they save.
    static let twoThreadMinimumBytes = Int(GD_SPLIT_MIN_BYTES)

    private let handle: OpaquePointer
    private var memory: UnsafeMutableBufferPointer<UInt8>?

    /// Output pixel layouts the pipeline asks libjpeg for.
    enum OutputFormat {
        /// 4 bytes per pixel: red, green, blue, padding (from YCbCr or RGB data).
        case rgbx
        /// 1 byte per pixel.
        case gray
        /// 4 bytes per pixel, as stored (from CMYK or YCCK data).
        case cmyk

        var bytesPerPixel: Int { self == .gray ? 1 : 4 }

        /// What the pipeline asks for a file of `colorSpace`: grey as grey, CMYK and YCCK as stored,
        /// everything else as RGBX.
        init(for colorSpace: ImageColorSpace) {
            switch colorSpace {
            case .grayscale: self = .gray
            case .ycbcr, .rgb: self = .rgbx
            case .cmyk, .ycck: self = .cmyk
            }
        }
    }

    /// Prepares to decode the file at `path`; `twoThreadMinimumBytes` < 0 keeps one thread.
    init(path: String, maxScans: Int, twoThreadMinimumBytes: Int = JPEGDecoder.twoThreadMinimumBytes) throws {
        guard let handle = gd_decoder_create(Int32(clamping: maxScans)) else {
            throw ImageError.decodeFailed("cannot create a decompressor")
        }
        self.handle = handle
        gd_decoder_set_split_min_bytes(handle, twoThreadMinimumBytes)
        try check(gd_decoder_open_file(handle, path))
    }

    /// Prepares to decode a copy of `bytes`; `twoThreadMinimumBytes` < 0 keeps one thread.
    init(bytes: [UInt8], maxScans: Int, twoThreadMinimumBytes: Int = JPEGDecoder.twoThreadMinimumBytes) throws {
        guard let handle = gd_decoder_create(Int32(clamping: maxScans)) else {
            throw ImageError.decodeFailed("cannot create a decompressor")
        }
        self.handle = handle
        gd_decoder_set_split_min_bytes(handle, twoThreadMinimumBytes)
        let copy = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: max(bytes.count, 1))
        _ = copy.initialize(from: bytes)
        memory = copy
        try check(gd_decoder_open_memory(handle, copy.baseAddress, UInt(bytes.count)))
    }

    deinit {
        gd_decoder_destroy(handle)
        memory?.deallocate()
    }

    private var cinfo: UnsafeMutablePointer<jpeg_decompress_struct> { gd_decoder_cinfo(handle) }

    /// Reads the header segments (libjpeg's own view; the probe has already vetted them).
    func readHeader() throws {
        try check(gd_decoder_read_header(handle))
    }

    /// Starts decompression at `scale`/8 of full size and returns the output size.
    func start(scale: Int, format: OutputFormat) throws -> (width: Int, height: Int) {
        let info = cinfo
        info.pointee.scale_num = UInt32(scale)
        info.pointee.scale_denom = 8
        info.pointee.dct_method = JDCT_ISLOW
        info.pointee.do_fancy_upsampling = 1
        switch format {
        case .rgbx: info.pointee.out_color_space = JCS_EXT_RGBX
        case .gray: info.pointee.out_color_space = JCS_GRAYSCALE
        case .cmyk: info.pointee.out_color_space = JCS_CMYK
        }
        try check(gd_decoder_start(handle))
        return (Int(info.pointee.output_width), Int(info.pointee.output_height))
    }

    /// Whether the last `start` decoded the scans on two threads.
    var decodedOnTwoThreads: Bool { gd_decoder_split_used(handle) != 0 }

    /// Reads up to `rows.count` scanlines into the given row pointers; returns how many.
    func readScanlines(into rows: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>, count: Int) throws -> Int {
        var read: UInt32 = 0
        try check(gd_decoder_read_scanlines(handle, rows, UInt32(count), &read))
        return Int(read)
    }

    /// Finishes decompression, which also reads (and checks) the rest of the file.
    func finish() throws {
        try check(gd_decoder_finish(handle))
    }

    private func check(_ status: gd_status) throws {
        guard status != GD_OK else { return }
        let message = String(cString: gd_decoder_message(handle))
        switch status {
        case GD_TRUNCATED: throw ImageError.truncated
        case GD_CORRUPT: throw ImageError.corrupt(message)
        case GD_TOO_MANY_SCANS: throw ImageError.tooManyScans(Int(message) ?? 0)
        case GD_IO: throw ImageError.io(message)
        default: throw ImageError.decodeFailed(message)
        }
    }
}
