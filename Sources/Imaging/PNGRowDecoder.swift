import CPNGShim

/// A PNG decoded by libpng's row reader (through the `CPNGShim` setjmp guard): a non-interlaced
/// file a band of rows at a time, each band handed to the resampler before the next is read, so
/// only `bandRows` rows of 8-bit RGB(A) are ever held — not the whole image (8.9 MB for a
/// 1170×2532 screenshot); an interlaced (Adam7) file whole, since its rows are final only after
/// the last pass. Both through the same transforms: palettes, `tRNS`, grey and 16-bit samples
/// expanded or scaled, `gAMA` honoured unless `sRGB`/`iCCP` or a `cICP` naming a converted
/// transfer is present (so a file's colours do not depend on whether it is interlaced). An HDR
/// PNG (such a `cICP`, opaque, 16-bit) keeps its 16 bits (`.rgb16`, 6 bytes a pixel: an interlaced
/// one is held whole at that size; decision 074).
final class PNGRowDecoder: RasterRows {
    /// Rows read per band.
    static let bandRows = 16

    let width: Int
    let height: Int
    /// RGB, or straight RGBA when the file has alpha (an alpha channel or `tRNS`).
    let layout: DecodedRaster.Layout
    /// Adam7: read whole, in one run.
    let interlaced: Bool
    /// A grey or grey-and-alpha file (colour type 0 or 4), expanded to RGB(A) by libpng: its derivatives
    /// are gray (`PixelBuffer.isAchromatic`), so its preview is kept to be encoded as such (decision 069).
    let isGray: Bool
    private let reader: OpaquePointer
    /// The in-memory file libpng reads from (nil for a file on disk).
    private let input: UnsafeMutableRawBufferPointer?

    /// The file's `cICP` chunk (ITU-T H.273 codes), when it has one describing full-range RGB.
    private(set) var cicp: (primaries: Int, transfer: Int)?
    /// Bits of each sample's value in the rows: 16 (`.rgb16`) for an HDR PNG read with its bits.
    private(set) var bitsPerSample = 8

    /// Opens the PNG at `path`, or in `bytes`, and reads its header. An opaque 16-bit file whose
    /// `cICP` transfer is one galleryd converts (PQ, HLG, linear, gammas: decision 074) keeps its
    /// 16 bits (`.rgb16`).
    static func open(fileAt path: String?, bytes: [UInt8]?, limits: ImageLimits) throws -> PNGRowDecoder {
        var input: UnsafeMutableRawBufferPointer?
        let reader: OpaquePointer?
        if let path {
            reader = gp_reader_create_file(path)
        } else {
            let bytes = bytes ?? []
            let memory = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, bytes.count), alignment: 16)
            memory.copyBytes(from: bytes)
            input = memory
            reader = gp_reader_create_memory(memory.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count)
        }
        guard let reader else {
            input?.deallocate()
            throw ImageError.decodeFailed("libpng: cannot create a reader")
        }
        var width: UInt32 = 0
        var height: UInt32 = 0
        var alpha: Int32 = 0
        var interlaced: Int32 = 0
        var gray: Int32 = 0
        var cicp: [Int32] = [-1, 0, 0, 0]
        var bits: Int32 = 8
        let keep16 = TransferCurve.convertedCodes.reduce(UInt32(0)) { $0 | 1 << UInt32($1) }
        let status = gp_reader_start(reader, &width, &height, &alpha, &interlaced, &gray, keep16, &cicp, &bits)
        guard status == GP_OK else {
            let error = Self.error(status, reader)
            gp_reader_destroy(reader)
            input?.deallocate()
            throw error
        }
        let decoder = PNGRowDecoder(
            reader: reader, input: input, width: Int(width), height: Int(height),
            layout: bits == 16 ? .rgb16 : alpha != 0 ? .rgba : .rgb, interlaced: interlaced != 0, isGray: gray != 0)
        decoder.bitsPerSample = Int(bits)
        if cicp[0] >= 0 { decoder.cicp = (Int(cicp[0]), Int(cicp[1])) }
        // The probe checked IHDR already; the same check here keeps this decoder safe on its own.
        guard decoder.width * decoder.height <= limits.maxPixels else {
            throw ImageError.tooManyPixels(width: decoder.width, height: decoder.height, limit: limits.maxPixels)
        }
        return decoder
    }

    private init(
        reader: OpaquePointer, input: UnsafeMutableRawBufferPointer?, width: Int, height: Int,
        layout: DecodedRaster.Layout, interlaced: Bool, isGray: Bool
    ) {
        self.interlaced = interlaced
        self.isGray = isGray
        self.reader = reader
        self.input = input
        self.width = width
        self.height = height
        self.layout = layout
    }

    deinit {
        gp_reader_destroy(reader)
        input?.deallocate()
    }

    /// Reads the rows band by band (an interlaced file in one run), calling `run` with each, then
    /// the chunks after the image data (a damaged end is an error as in a whole decode).
    func forEachRun(_ run: (UnsafePointer<UInt8>, Int, Int) throws -> Void) throws {
        let stride = width * layout.bytesPerPixel
        let band = UnsafeMutablePointer<UInt8>.allocate(capacity: stride * (interlaced ? height : Self.bandRows))
        defer { band.deallocate() }
        if interlaced {
            let status = gp_reader_read_image(reader, band, stride, UInt32(height))
            guard status == GP_OK else { throw Self.error(status, reader) }
            try run(band, stride, height)
        }
        var done = interlaced ? height : 0
        while done < height {
            let count = min(Self.bandRows, height - done)
            let status = gp_reader_read_rows(reader, band, stride, UInt32(count))
            guard status == GP_OK else { throw Self.error(status, reader) }
            try run(band, stride, count)
            done += count
        }
        let status = gp_reader_finish(reader)
        guard status == GP_OK else { throw Self.error(status, reader) }
    }

    /// The `ImageError` for a failed call, with libpng's message.
    private static func error(_ status: gp_status, _ reader: OpaquePointer) -> ImageError {
        let message = String(cString: gp_reader_message(reader))
        switch status {
        case GP_TRUNCATED: return .truncated
        case GP_IO: return .io(message)
        default: return .corrupt("libpng: \(message)")
        }
    }
}
