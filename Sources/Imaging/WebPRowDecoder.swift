import CWebP

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A still WebP (lossy or lossless, with or without alpha) decoded incrementally by libwebp's
/// `WebPIDecoder`, which hands out each run of rows as soon as it is finished, so resampling
/// overlaps decoding; when `width`×`height` is smaller than the image, libwebp's rescaler
/// (`use_scaling`) shrinks it while decoding, as vips' WebP loader does.
///
/// libwebp writes into one image-sized output buffer. It is an anonymous mapping whose pages are
/// given back (`madvise(MADV_DONTNEED)`) as soon as their rows are handed out — libwebp never
/// touches a row again once it counts it as finished — so only a band of rows is ever resident,
/// not the whole decoded image (36 MB of RGB for 4000×3000).
final class WebPRowDecoder: RasterRows {
    /// Width of the rows handed out (scaled).
    let width: Int
    /// Height of the image handed out (scaled).
    let height: Int
    /// RGB, or straight RGBA when the file has alpha.
    let layout: DecodedRaster.Layout
    /// The image's size in the file.
    let fileSize: (width: Int, height: Int)
    private let bytes: [UInt8]

    /// Bytes fed to libwebp at a time: a thirty-second of the file, at least 16 kB, so a
    /// run is a small band of rows.
    private var chunk: Int { max(16 * 1024, bytes.count / 32) }

    /// A decoder of `bytes` (already checked: a still image of `originalWidth`×`originalHeight`
    /// within the pixel limit) to `width`×`height`.
    init(bytes: [UInt8], originalWidth: Int, originalHeight: Int, width: Int, height: Int, layout: DecodedRaster.Layout)
    {
        self.bytes = bytes
        fileSize = (originalWidth, originalHeight)
        self.width = width
        self.height = height
        self.layout = layout
    }

    /// Decodes, calling `run` after each chunk with the rows it finished.
    func forEachRun(_ run: (UnsafePointer<UInt8>, Int, Int) throws -> Void) throws {
        let stride = width * layout.bytesPerPixel
        let size = stride * height
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let mappingSize = (size + page - 1) / page * page
        guard let mapping = mmap(nil, mappingSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
            mapping != MAP_FAILED
        else { throw ImageError.decodeFailed("cannot map \(mappingSize) bytes for the WebP decode") }
        defer { munmap(mapping, mappingSize) }
        let pixels = mapping.assumingMemoryBound(to: UInt8.self)

        // libwebp keeps pointers to the config's options and output buffer: give them a fixed address.
        let config = UnsafeMutablePointer<WebPDecoderConfig>.allocate(capacity: 1)
        defer { config.deallocate() }
        guard WebPInitDecoderConfig(config) != 0 else { throw ImageError.decodeFailed("libwebp version mismatch") }
        if width != fileSize.width || height != fileSize.height {
            config.pointee.options.use_scaling = 1
            config.pointee.options.scaled_width = Int32(width)
            config.pointee.options.scaled_height = Int32(height)
        }
        // Lossy files: the loop filter on a second thread while the next macroblock row is decoded.
        config.pointee.options.use_threads = 1
        config.pointee.output.colorspace = layout == .rgba ? MODE_RGBA : MODE_RGB
        config.pointee.output.is_external_memory = 1
        config.pointee.output.u.RGBA.rgba = pixels
        config.pointee.output.u.RGBA.stride = Int32(stride)
        config.pointee.output.u.RGBA.size = size

        try bytes.withUnsafeBufferPointer { input in
            // Only the headers are read here; the data is fed below, a chunk more each time.
            guard let decoder = WebPIDecode(input.baseAddress, input.count, config) else {
                throw ImageError.corrupt("libwebp: cannot start decoding")
            }
            defer { WebPIDelete(decoder) }
            var fed = 0
            var handedOut = 0
            var released = 0
            while true {
                fed = min(input.count, fed + chunk)
                let status = WebPIUpdate(decoder, input.baseAddress, fed)
                guard status == VP8_STATUS_OK || status == VP8_STATUS_SUSPENDED else {
                    throw WebPDecoder.error(status)
                }
                var finished = Int32(handedOut)
                _ = WebPIDecGetRGB(decoder, &finished, nil, nil, nil)
                if Int(finished) > handedOut {
                    try run(pixels + handedOut * stride, stride, Int(finished) - handedOut)
                    handedOut = Int(finished)
                    let end = handedOut * stride / page * page
                    if end > released {
                        _ = madvise(mapping + released, end - released, MADV_DONTNEED)
                        released = end
                    }
                }
                if status == VP8_STATUS_OK { break }
                if fed == input.count { throw ImageError.truncated }
            }
            guard handedOut == height else {
                throw ImageError.corrupt("libwebp finished \(handedOut) of \(height) rows")
            }
        }
    }
}
