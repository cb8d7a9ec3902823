import CPNG

@testable import Imaging

/// The tests' reference PNG decode: libpng's simplified API (`png_image_*`), which keeps libpng's
/// setjmp/longjmp error handling inside libpng and reports a failure as a sentence in
/// `png_image.message`. It decodes a file whole to 8-bit RGB, or straight RGBA when it has alpha
/// (16-bit samples reduced, palettes and `tRNS` expanded, grey widened, `gAMA` honoured): the rows
/// `PNGRowDecoder` must give for a non-interlaced file. Not for an interlaced one: libpng 1.6.39's
/// simplified API applies `gAMA` even beside an `iCCP` profile (which the PNG specification,
/// §11.3.2.3, and galleryd do not) and misplaces 16-bit Adam7 rows (decision 039, session 19).
enum PNGDecoder {
    /// Decodes the file at `path`.
    static func decode(fileAt path: String, limits: ImageLimits) throws -> DecodedRaster {
        try decode(limits: limits) { image in png_image_begin_read_from_file(image, path) }
    }

    /// Decodes an in-memory PNG.
    static func decode(bytes: [UInt8], limits: ImageLimits) throws -> DecodedRaster {
        // begin_read_from_memory keeps the pointer until finish_read: hand it memory that outlives both.
        let memory = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, bytes.count), alignment: 16)
        defer { memory.deallocate() }
        memory.copyBytes(from: bytes)
        return try decode(limits: limits) { image in
            png_image_begin_read_from_memory(image, memory.baseAddress, bytes.count)
        }
    }

    private static func decode(limits: ImageLimits, begin: (UnsafeMutablePointer<png_image>) -> Int32) throws
        -> DecodedRaster
    {
        var image = png_image()
        image.version = UInt32(PNG_IMAGE_VERSION)
        guard begin(&image) != 0 else { throw failure(&image) }
        // Most 16-bit PNGs without gAMA (scanners, editors) hold sRGB-encoded samples, as browsers and
        // vips read them; libpng would take them as linear. Set after `begin`, which resets the flags.
        image.flags |= UInt32(PNG_IMAGE_FLAG_16BIT_sRGB)
        let width = Int(image.width)
        let height = Int(image.height)
        // The probe checked IHDR already; the same check here keeps this decoder safe on its own.
        guard width * height <= limits.maxPixels else {
            png_image_free(&image)
            throw ImageError.tooManyPixels(width: width, height: height, limit: limits.maxPixels)
        }
        // `begin` set the file's own format: keep alpha (grey+alpha, RGBA, a palette with tRNS) only
        // when there is some; opaque images take a quarter less memory as RGB.
        let hasAlpha = image.format & UInt32(PNG_FORMAT_FLAG_ALPHA) != 0
        image.format = UInt32(PNG_FORMAT_FLAG_COLOR) | (hasAlpha ? UInt32(PNG_FORMAT_FLAG_ALPHA) : 0)
        let (raster, memory) = DecodedRaster.allocate(width: width, height: height, layout: hasAlpha ? .rgba : .rgb)
        guard png_image_finish_read(&image, nil, memory, Int32(raster.stride), nil) != 0 else { throw failure(&image) }
        return raster
    }

    /// The error libpng reported (it frees its own state on failure; `png_image_free` is safe again).
    private static func failure(_ image: inout png_image) -> ImageError {
        let message = withUnsafeBytes(of: image.message) { raw in
            String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
        }
        png_image_free(&image)
        if message.contains("EOF") || message.contains("end of") || message.contains("truncat") {
            return .truncated
        }
        return .corrupt("libpng: \(message)")
    }
}
