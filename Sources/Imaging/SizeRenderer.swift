/// Renders one display size (a Flickr ladder rung) from a stored derivative: a JPEG already
/// upright (the preview or the thumbnail), so no orientation is applied here.
///
/// Decode at the smallest DCT scale that keeps `decodeMargin`× the target (a 240 px rendition of
/// a 2048 preview decodes at 2/8), rows streamed through the same Lanczos-3
/// `StreamingResampler` as the derivatives, then encoded as the thumbnail is (progressive,
/// optimized Huffman, mozjpeg's tables at the thumbnail's quality and chroma boost): a size is
/// shown at 1:1 like a thumbnail. A square is the centred square of the source, cropped before
/// resampling (only its rows and columns are resampled).
public enum SizeRenderer {
    /// How many times the target the DCT-scaled decode keeps at least: 2, libvips's rule for
    /// shrink-on-load in `vips_thumbnail` (a block shrink to no less than twice the target, the
    /// final resize doing the rest), not the derivatives' 3 (`DerivativePlan.decodeMargin`): a
    /// cold `s` from the 2048 preview decodes at 2/8 instead of 3/8 (docs/decisions/040).
    public static let decodeMargin = 2

    /// Renders `width`×`height` from the JPEG at `path`; `square` crops the source's centred square
    /// first (then `width` must equal `height`). Never enlarges: a target larger than the source
    /// (or its square) is clamped to it.
    public static func render(
        fileAt path: String, width: Int, height: Int, square: Bool, spec: DerivativeSpec = DerivativeSpec(),
        limits: ImageLimits = ImageLimits()
    ) throws -> EncodedImage {
        let info = try ImageProbe.probe(fileAt: path, limits: limits)
        return try render(info: info, width: width, height: height, square: square, spec: spec) {
            try JPEGDecoder(path: path, maxScans: limits.maxScans)
        }
    }

    /// As `render(fileAt:…)` for JPEG bytes in memory (tests and the bench).
    public static func render(
        bytes: [UInt8], width: Int, height: Int, square: Bool, spec: DerivativeSpec = DerivativeSpec(),
        limits: ImageLimits = ImageLimits()
    ) throws -> EncodedImage {
        let info = try ImageProbe.probe(bytes: bytes, limits: limits)
        return try render(info: info, width: width, height: height, square: square, spec: spec) {
            try JPEGDecoder(bytes: bytes, maxScans: limits.maxScans)
        }
    }

    /// The ThumbHash (`ThumbHash`, about 25 bytes) of the JPEG at `path`, a stored thumbnail:
    /// decoded at a DCT scale and resampled to fit 100×100 as `render` does, then hashed. For
    /// photos processed before the worker stored one (the backfill); within a few units of what
    /// the worker computes from the thumbnail's pixels before they are encoded.
    public static func thumbHash(fileAt path: String, limits: ImageLimits = ImageLimits()) throws -> [UInt8] {
        let info = try ImageProbe.probe(fileAt: path, limits: limits)
        let edge = ThumbHash.maxEdge
        let scale = Double(edge) / Double(max(info.width, info.height, 1))
        let (width, height) =
            scale >= 1
            ? (info.width, info.height)
            : (
                max(1, Int((Double(info.width) * scale).rounded())),
                max(1, Int((Double(info.height) * scale).rounded()))
            )
        let pixels = try resampled(info: info, width: width, height: height, square: false) {
            try JPEGDecoder(path: path, maxScans: limits.maxScans)
        }
        return ThumbHash.encode(pixels)
    }

    private static func render(
        info: ImageInfo, width: Int, height: Int, square: Bool, spec: DerivativeSpec,
        makeDecoder: () throws -> JPEGDecoder
    ) throws -> EncodedImage {
        let pixels = try resampled(info: info, width: width, height: height, square: square, makeDecoder: makeDecoder)
        let channels = pixels.channels
        let quality = spec.effectiveThumbnailQuality
        let tables = QuantizationTables(
            quality: quality, gray: channels == 1, chromaBoost: DerivativeSpec.thumbnailChromaQualityBoost)
        let icc = ImagePipeline.compatibleProfile(info.iccProfile, channels: channels)
        let jpeg = try JPEGEncoder.encode(
            pixels, quality: quality, quantizer: spec.quantizer, iccProfile: icc, tables: tables)
        return EncodedImage(jpeg: jpeg, width: pixels.width, height: pixels.height)
    }

    /// The pixels of `width`×`height` (see `render`), decoded and resampled, not encoded.
    private static func resampled(
        info: ImageInfo, width: Int, height: Int, square: Bool, makeDecoder: () throws -> JPEGDecoder
    ) throws -> PixelBuffer {
        guard info.format == .jpeg, info.colorSpace == .ycbcr || info.colorSpace == .grayscale else {
            throw ImageError.unsupportedFormat
        }
        // The source region (full-size pixels): the whole image, or its centred square.
        let side = min(info.width, info.height)
        let region = square ? (width: side, height: side) : (width: info.width, height: info.height)
        let target = (width: max(1, min(width, region.width)), height: max(1, min(height, region.height)))
        // The smallest n/8 whose region keeps the margin over the target.
        let scale = DerivativePlan.scale(
            width: region.width, height: region.height, covering: [target], margin: decodeMargin)
        let decoder = try makeDecoder()
        try decoder.readHeader()
        let format: JPEGDecoder.OutputFormat = info.colorSpace == .grayscale ? .gray : .rgbx
        let size = try decoder.start(scale: scale, format: format)
        let scaledSide = min(size.width, size.height)
        let crop =
            square
            ? (
                x: (size.width - scaledSide) / 2, y: (size.height - scaledSide) / 2, width: scaledSide,
                height: scaledSide
            )
            : (x: 0, y: 0, width: size.width, height: size.height)
        let channels = format.bytesPerPixel
        let converter = RowConverter(format: format, invertedCMYK: false)
        let resampler = StreamingResampler(
            sourceWidth: crop.width, sourceHeight: crop.height, targetWidth: target.width, targetHeight: target.height,
            channels: channels)
        let rowBytes = size.width * channels
        let rowsPerRead = 16
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: rowBytes * rowsPerRead)
        defer { buffer.deallocate() }
        let rows = UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>.allocate(capacity: rowsPerRead)
        defer { rows.deallocate() }
        for r in 0..<rowsPerRead { rows[r] = buffer + r * rowBytes }
        let floats = UnsafeMutablePointer<Float>.allocate(capacity: max(1, crop.width * channels))
        defer { floats.deallocate() }
        var y = 0
        while y < size.height {
            let count = try decoder.readScanlines(into: rows, count: min(rowsPerRead, size.height - y))
            guard count > 0 else { throw ImageError.decodeFailed("decoder returned no rows") }
            for r in 0..<count where y + r >= crop.y && y + r < crop.y + crop.height {
                converter.convert(rows[r]! + crop.x * channels, width: crop.width, into: floats)
                resampler.push(row: floats)
            }
            y += count
        }
        try decoder.finish()
        return resampler.finish()
    }
}
