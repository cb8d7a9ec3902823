import CWebP

/// Decodes a WebP with libwebp to 8-bit RGB, or straight RGBA when it has alpha: lossy (VP8), lossless (VP8L), with or
/// without alpha, and an animation's first frame as shown (libwebpdemux's `WebPAnimDecoder`
/// composes it on its canvas). libwebp reports errors as status codes; nothing longjmps.
enum WebPDecoder {
    /// Decodes the whole file held in `bytes`.
    static func decode(bytes: [UInt8], limits: ImageLimits) throws -> DecodedRaster {
        var features = WebPBitstreamFeatures()
        let status = bytes.withUnsafeBufferPointer { WebPGetFeatures($0.baseAddress, $0.count, &features) }
        guard status == VP8_STATUS_OK else { throw error(status) }
        let width = Int(features.width)
        let height = Int(features.height)
        guard width > 0, height > 0 else { throw ImageError.corrupt("WebP size \(width)×\(height)") }
        guard width * height <= limits.maxPixels else {
            throw ImageError.tooManyPixels(width: width, height: height, limit: limits.maxPixels)
        }
        if features.has_animation != 0 { return try firstFrame(bytes: bytes, width: width, height: height) }
        // Opaque images as RGB: a quarter less memory than RGBA.
        let alpha = features.has_alpha != 0
        let (raster, memory) = DecodedRaster.allocate(width: width, height: height, layout: alpha ? .rgba : .rgb)
        let decoded = bytes.withUnsafeBufferPointer { input in
            alpha
                ? WebPDecodeRGBAInto(input.baseAddress, input.count, memory, raster.stride * height, Int32(raster.stride))
                : WebPDecodeRGBInto(input.baseAddress, input.count, memory, raster.stride * height, Int32(raster.stride))
        }
        guard decoded != nil else {
            // WebPDecode's own status says why (truncated data, a bad bitstream).
            var config = WebPDecoderConfig()
            _ = WebPInitDecoderConfig(&config)
            let status = bytes.withUnsafeBufferPointer { WebPDecode($0.baseAddress, $0.count, &config) }
            WebPFreeDecBuffer(&config.output)
            throw error(status == VP8_STATUS_OK ? VP8_STATUS_BITSTREAM_ERROR : status)
        }
        return raster
    }

    /// The first frame of an animation, composed on the canvas as a viewer shows it.
    private static func firstFrame(bytes: [UInt8], width: Int, height: Int) throws -> DecodedRaster {
        var options = WebPAnimDecoderOptions()
        guard WebPAnimDecoderOptionsInit(&options) != 0 else { throw ImageError.decodeFailed("libwebp version mismatch") }
        options.color_mode = MODE_RGBA
        options.use_threads = 0
        return try bytes.withUnsafeBufferPointer { input in
            var data = WebPData(bytes: input.baseAddress, size: input.count)
            guard let decoder = WebPAnimDecoderNew(&data, &options) else {
                throw ImageError.corrupt("libwebp: cannot read the animation")
            }
            defer { WebPAnimDecoderDelete(decoder) }
            var frame: UnsafeMutablePointer<UInt8>?
            var timestamp: Int32 = 0
            guard WebPAnimDecoderGetNext(decoder, &frame, &timestamp) != 0, let frame else {
                throw ImageError.corrupt("libwebp: cannot decode the animation's first frame")
            }
            let (raster, memory) = DecodedRaster.allocate(width: width, height: height, layout: .rgba)
            memory.update(from: frame, count: raster.stride * height)
            return raster
        }
    }

    /// The `ImageError` for a libwebp status.
    private static func error(_ status: VP8StatusCode) -> ImageError {
        switch status {
        case VP8_STATUS_NOT_ENOUGH_DATA: return .truncated
        case VP8_STATUS_UNSUPPORTED_FEATURE: return .decodeFailed("libwebp: unsupported feature")
        default: return .corrupt("libwebp status \(status.rawValue)")
        }
    }
}
