/// A whole decoded 8-bit image as a C library handed it out (libheif's plane, libpng's or
/// libwebp's buffer): rows of `stride` bytes, RGB or RGBA (straight, not premultiplied, alpha).
/// `release` frees the memory when the raster goes away.
final class DecodedRaster: RasterRows {
    /// How a pixel is laid out.
    enum Layout {
        /// Red, green, blue.
        case rgb
        /// Red, green, blue, alpha.
        case rgba
        /// Red, green, blue, 16 bits each, little-endian, holding values of 9 to 16 bits: an HDR
        /// HEIC's or AVIF's rows (`HEIFPlanarRows`) or an HDR PNG's (`PNGRowDecoder`), decision 074.
        case rgb16

        /// Bytes per pixel.
        var bytesPerPixel: Int {
            switch self {
            case .rgb: 3
            case .rgba: 4
            case .rgb16: 6
            }
        }
    }

    /// Width in pixels.
    let width: Int
    /// Height in pixels.
    let height: Int
    /// Bytes from one row to the next.
    let stride: Int
    /// Pixel layout.
    let layout: Layout
    /// The first row.
    let pixels: UnsafePointer<UInt8>
    private let release: () -> Void

    /// Wraps decoded memory, freed by `release` in `deinit`.
    init(
        width: Int, height: Int, stride: Int, layout: Layout, pixels: UnsafePointer<UInt8>,
        release: @escaping () -> Void
    ) {
        self.width = width
        self.height = height
        self.stride = stride
        self.layout = layout
        self.pixels = pixels
        self.release = release
    }

    /// A raster in memory this process allocated (`stride` = `width` × bytes per pixel).
    static func allocate(width: Int, height: Int, layout: Layout) -> (DecodedRaster, UnsafeMutablePointer<UInt8>) {
        let stride = width * layout.bytesPerPixel
        let memory = UnsafeMutablePointer<UInt8>.allocate(capacity: max(1, stride * height))
        let raster = DecodedRaster(
            width: width, height: height, stride: stride, layout: layout, pixels: memory,
            release: { memory.deallocate() })
        return (raster, memory)
    }

    deinit { release() }

    /// The whole image as one run.
    func forEachRun(_ run: (UnsafePointer<UInt8>, Int, Int) throws -> Void) throws {
        try run(pixels, stride, height)
    }
}
