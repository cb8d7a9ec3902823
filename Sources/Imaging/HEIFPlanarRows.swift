import CHeif

/// An HDR HEIC's or AVIF's primary image as libheif decoded it for the transfer conversion
/// (decision 074): three 16-bit planes (R, G, B, each sample its `bitsPerSample`-bit value),
/// handed out 16 rows at a time interleaved (`.rgb16`) through one band of scratch memory.
/// libheif converts to planar RGB in one step from its YCbCr planes, where interleaved 16-bit RGB
/// costs it a planar image and an interleaved one (a 12 MP PQ HEIC's peak: 131 MB against 274 MB
/// for the decode alone). Owns the libheif image and releases it in `deinit`.
final class HEIFPlanarRows: RasterRows {
    /// Width in pixels.
    let width: Int
    /// Height in pixels.
    let height: Int
    /// Bits of each sample's value (10 or 12).
    let bitsPerSample: Int
    /// The image's peak luminance in cd/m² from its `clli` or `mdcv`, if it says.
    let peakLuminance: Double?
    private let image: OpaquePointer
    /// Each plane's first row and bytes from one row to the next: red, green, blue.
    private let planes: [(first: UnsafePointer<UInt8>, stride: Int)]
    private static let bandRows = 16

    /// Rows interleaved from the planes.
    var layout: DecodedRaster.Layout { .rgb16 }

    /// Takes `image` (libheif's `heif_chroma_444` RGB at more than 8 bits), released with this
    /// object, or now when it lacks a plane or its planes are not one size.
    init(image: OpaquePointer, peakLuminance: Double?) throws {
        self.image = image
        self.peakLuminance = peakLuminance
        width = Int(heif_image_get_width(image, heif_channel_R))
        height = Int(heif_image_get_height(image, heif_channel_R))
        bitsPerSample = Int(heif_image_get_bits_per_pixel_range(image, heif_channel_R))
        var planes: [(first: UnsafePointer<UInt8>, stride: Int)] = []
        for channel in [heif_channel_R, heif_channel_G, heif_channel_B] {
            var stride: Int32 = 0
            guard let plane = heif_image_get_plane_readonly(image, channel, &stride),
                Int(heif_image_get_width(image, channel)) == width,
                Int(heif_image_get_height(image, channel)) == height,
                Int(stride) >= width * 2
            else { break }
            planes.append((plane, Int(stride)))
        }
        self.planes = planes
        guard planes.count == 3, width > 0, height > 0, (9...16).contains(bitsPerSample) else {
            throw ImageError.decodeFailed("libheif returned no 16-bit RGB planes")
        }
    }

    deinit { heif_image_release(image) }

    /// The image in runs of up to 16 rows, each run interleaved into the same band (valid until
    /// `run` returns).
    func forEachRun(_ run: (UnsafePointer<UInt8>, Int, Int) throws -> Void) throws {
        let rowBytes = width * 6
        let band = UnsafeMutableRawPointer.allocate(byteCount: rowBytes * Self.bandRows, alignment: 64)
        defer { band.deallocate() }
        let (r, g, b) = (planes[0], planes[1], planes[2])
        var y = 0
        while y < height {
            let count = min(Self.bandRows, height - y)
            for row in 0..<count {
                let out = band + row * rowBytes
                let pr = UnsafeRawPointer(r.first + (y + row) * r.stride)
                let pg = UnsafeRawPointer(g.first + (y + row) * g.stride)
                let pb = UnsafeRawPointer(b.first + (y + row) * b.stride)
                for x in 0..<width {
                    out.storeBytes(
                        of: pr.loadUnaligned(fromByteOffset: 2 * x, as: UInt16.self).littleEndian, toByteOffset: 6 * x,
                        as: UInt16.self)
                    out.storeBytes(
                        of: pg.loadUnaligned(fromByteOffset: 2 * x, as: UInt16.self).littleEndian,
                        toByteOffset: 6 * x + 2,
                        as: UInt16.self)
                    out.storeBytes(
                        of: pb.loadUnaligned(fromByteOffset: 2 * x, as: UInt16.self).littleEndian,
                        toByteOffset: 6 * x + 4,
                        as: UInt16.self)
                }
            }
            try run(band.assumingMemoryBound(to: UInt8.self), rowBytes, count)
            y += count
        }
    }
}
