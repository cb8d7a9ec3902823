/// Applies an EXIF orientation (TIFF 6.0 tag 0x0112) to pixels so they display upright.
///
/// For a displayed pixel (dx, dy) the stored pixel is, with W×H the stored size:
/// 1 (dx, dy) · 2 (W−1−dx, dy) · 3 (W−1−dx, H−1−dy) · 4 (dx, H−1−dy) ·
/// 5 (dy, dx) · 6 (dy, H−1−dx) · 7 (W−1−dy, H−1−dx) · 8 (W−1−dy, dx).
enum ImageOrientation {
    /// Returns `image` as it should be displayed for `orientation` (1…8; anything else is 1).
    static func apply(_ orientation: Int, to image: PixelBuffer) -> PixelBuffer {
        guard (2...8).contains(orientation) else { return image }
        switch image.channels {
        case 1: return transform(orientation, image, as: UInt8.self)
        case 4: return transform(orientation, image, as: UInt32.self)
        default: preconditionFailure("unsupported channel count \(image.channels)")
        }
    }

    /// Where stored row `y` of a `width`×`height` image goes in the displayed image: the index of
    /// its first pixel and the index step from one pixel to the next (the inverse of the table
    /// above), so a resampler can write its rows upright as it produces them.
    static func placement(_ orientation: Int, width w: Int, height h: Int, row y: Int) -> (base: Int, step: Int) {
        switch orientation {
        case 2: return (y * w + w - 1, -1)
        case 3: return ((h - 1 - y) * w + w - 1, -1)
        case 4: return ((h - 1 - y) * w, 1)
        case 5: return (y, h)
        case 6: return (h - 1 - y, h)
        case 7: return ((w - 1) * h + h - 1 - y, -h)
        case 8: return ((w - 1) * h + y, -h)
        default: return (y * w, 1)
        }
    }

    /// Writes stored row `y` (`width` pixels of 1 or 4 bytes) of a `width`×`height` stored image
    /// to its displayed place in `image`, which holds the whole upright image.
    static func place(
        row: UnsafePointer<UInt8>, y: Int, width: Int, height: Int, channels: Int, orientation: Int,
        into image: UnsafeMutableRawBufferPointer
    ) {
        let (base, step) = placement(orientation, width: width, height: height, row: y)
        if step == 1 {
            (image.baseAddress! + base * channels).copyMemory(from: row, byteCount: width * channels)
        } else if channels == 4 {
            let dst = image.bindMemory(to: UInt32.self).baseAddress!
            UnsafeRawPointer(row).withMemoryRebound(to: UInt32.self, capacity: width) { src in
                var index = base
                for x in 0..<width {
                    dst[index] = src[x]
                    index += step
                }
            }
        } else {
            let dst = image.bindMemory(to: UInt8.self).baseAddress!
            var index = base
            for x in 0..<width {
                dst[index] = row[x]
                index += step
            }
        }
    }

    /// Reverses the pixels of one row in place (orientation 2, applied while streaming).
    static func mirror(row: UnsafeMutablePointer<UInt8>, width: Int, channels: Int) {
        if channels == 1 {
            var buffer = UnsafeMutableBufferPointer(start: row, count: width)
            buffer.reverse()
        } else {
            UnsafeMutableRawPointer(row).withMemoryRebound(to: UInt32.self, capacity: width) { pixels in
                var buffer = UnsafeMutableBufferPointer(start: pixels, count: width)
                buffer.reverse()
            }
        }
    }

    /// Every orientation is an affine map of indices: stored index = c0 + dx·ax + dy·ay. The copy
    /// runs in square tiles so the quarter turns read and write within a few cache lines.
    private static func transform<Pixel>(_ orientation: Int, _ image: PixelBuffer, as: Pixel.Type) -> PixelBuffer {
        let w = image.width
        let h = image.height
        let swaps = orientation >= 5
        let outWidth = swaps ? h : w
        let outHeight = swaps ? w : h
        let last = (h - 1) * w
        let (c0, ax, ay): (Int, Int, Int)
        switch orientation {
        case 2: (c0, ax, ay) = (w - 1, -1, w)
        case 3: (c0, ax, ay) = (last + w - 1, -1, -w)
        case 4: (c0, ax, ay) = (last, 1, -w)
        case 5: (c0, ax, ay) = (0, w, 1)
        case 6: (c0, ax, ay) = (last, -w, 1)
        case 7: (c0, ax, ay) = (last + w - 1, -w, -1)
        case 8: (c0, ax, ay) = (w - 1, w, -1)
        default: (c0, ax, ay) = (0, 1, w)
        }
        var result = PixelBuffer(width: outWidth, height: outHeight, channels: image.channels)
        let tile = 32
        image.bytes.withUnsafeBytes { sourceBytes in
            result.bytes.withUnsafeMutableBytes { targetBytes in
                let src = sourceBytes.bindMemory(to: Pixel.self).baseAddress!
                let dst = targetBytes.bindMemory(to: Pixel.self).baseAddress!
                for ty in stride(from: 0, to: outHeight, by: tile) {
                    for tx in stride(from: 0, to: outWidth, by: tile) {
                        for dy in ty..<min(ty + tile, outHeight) {
                            let row = dst + dy * outWidth
                            var index = c0 + tx * ax + dy * ay
                            for dx in tx..<min(tx + tile, outWidth) {
                                row[dx] = src[index]
                                index += ax
                            }
                        }
                    }
                }
            }
        }
        return result
    }
}
