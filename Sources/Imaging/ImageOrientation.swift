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

    private static func transform<Pixel>(_ orientation: Int, _ image: PixelBuffer, as: Pixel.Type) -> PixelBuffer {
        let w = image.width, h = image.height
        let swaps = orientation >= 5
        let outWidth = swaps ? h : w, outHeight = swaps ? w : h
        var result = PixelBuffer(width: outWidth, height: outHeight, channels: image.channels)
        image.bytes.withUnsafeBytes { sourceBytes in
            result.bytes.withUnsafeMutableBytes { targetBytes in
                let src = sourceBytes.bindMemory(to: Pixel.self).baseAddress!
                let dst = targetBytes.bindMemory(to: Pixel.self).baseAddress!
                for dy in 0..<outHeight {
                    let row = dst + dy * outWidth
                    switch orientation {
                    case 2:
                        let s = src + dy * w
                        for dx in 0..<outWidth { row[dx] = s[w - 1 - dx] }
                    case 3:
                        let s = src + (h - 1 - dy) * w
                        for dx in 0..<outWidth { row[dx] = s[w - 1 - dx] }
                    case 4:
                        let s = src + (h - 1 - dy) * w
                        for dx in 0..<outWidth { row[dx] = s[dx] }
                    case 5:
                        for dx in 0..<outWidth { row[dx] = src[dx * w + dy] }
                    case 6:
                        for dx in 0..<outWidth { row[dx] = src[(h - 1 - dx) * w + dy] }
                    case 7:
                        for dx in 0..<outWidth { row[dx] = src[(h - 1 - dx) * w + (w - 1 - dy)] }
                    default:  // 8
                        for dx in 0..<outWidth { row[dx] = src[dx * w + (w - 1 - dy)] }
                    }
                }
            }
        }
        return result
    }
}
