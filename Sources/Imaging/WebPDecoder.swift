import CWebP

/// Decodes a WebP with libwebp: a still (lossy VP8 or lossless VP8L, with or without alpha)
/// through `WebPRowDecoder`, rows handed out as they are finished and shrunk while decoding to
/// the preview's size when the image is larger; an animation's first frame whole,
/// as shown (libwebpdemux's `WebPAnimDecoder` composes it on its canvas). libwebp reports errors
/// as status codes; nothing longjmps.
enum WebPDecoder {
    /// The rows of the file held in `bytes`, at least every size in `targets` (the full image when
    /// that is not smaller: libwebp only shrinks); the sizes are checked against
    /// `limits` before any pixel is allocated.
    static func rows(
        bytes: [UInt8], limits: ImageLimits, covering targets: [(width: Int, height: Int)]
    ) throws -> any RasterRows {
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
        let size = DerivativePlan.freelyScaledSize(width: width, height: height, covering: targets, margin: 1)
        // Opaque images as RGB: a quarter less memory than RGBA.
        return WebPRowDecoder(
            bytes: bytes, originalWidth: width, originalHeight: height, width: size.width, height: size.height,
            layout: features.has_alpha != 0 ? .rgba : .rgb)
    }

    /// The first frame of an animation, composed on the canvas as a viewer shows it.
    private static func firstFrame(bytes: [UInt8], width: Int, height: Int) throws -> DecodedRaster {
        var options = WebPAnimDecoderOptions()
        guard WebPAnimDecoderOptionsInit(&options) != 0 else {
            throw ImageError.decodeFailed("libwebp version mismatch")
        }
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
    static func error(_ status: VP8StatusCode) -> ImageError {
        switch status {
        case VP8_STATUS_NOT_ENOUGH_DATA: return .truncated
        case VP8_STATUS_UNSUPPORTED_FEATURE: return .decodeFailed("libwebp: unsupported feature")
        default: return .corrupt("libwebp status \(status.rawValue)")
        }
    }
}
