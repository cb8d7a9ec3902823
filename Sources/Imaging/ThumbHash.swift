import Foundation

/// ThumbHash (Evan Wallace's placeholder format, evanw/thumbhash): an image of at most 100×100
/// pixels reduced to about 25 bytes of DCT terms (luminance, two chroma axes, alpha), which a
/// client decodes to a blurred 32-pixel preview before any image byte arrives. Ported from the
/// reference JavaScript, with the same double-precision arithmetic and rounding (`Math.round`:
/// half up), so the bytes match the reference's for the same pixels (tests hold its outputs).
public enum ThumbHash {
    /// Longest edge the encoder accepts: more is slower with no benefit.
    public static let maxEdge = 100

    /// The hash of `width`×`height` RGBA pixels (not premultiplied), each edge 1…100.
    public static func encode(width w: Int, height h: Int, rgba: [UInt8]) -> [UInt8] {
        precondition(w >= 1 && h >= 1 && w <= maxEdge && h <= maxEdge && rgba.count == w * h * 4)
        var average = (r: 0.0, g: 0.0, b: 0.0, a: 0.0)
        for i in 0..<(w * h) {
            let alpha = Double(rgba[4 * i + 3]) / 255
            average.r += alpha / 255 * Double(rgba[4 * i])
            average.g += alpha / 255 * Double(rgba[4 * i + 1])
            average.b += alpha / 255 * Double(rgba[4 * i + 2])
            average.a += alpha
        }
        if average.a > 0 {
            average.r /= average.a
            average.g /= average.a
            average.b /= average.a
        }
        let hasAlpha = average.a < Double(w * h)
        // Fewer luminance terms when alpha needs its own.
        let lLimit = hasAlpha ? 5 : 7
        let lx = max(1, round(Double(lLimit * w) / Double(max(w, h))))
        let ly = max(1, round(Double(lLimit * h) / Double(max(w, h))))
        var l = [Double](repeating: 0, count: w * h)
        var p = l
        var q = l
        var a = l
        // Composited over the average colour, then to luminance, yellow−blue and red−green.
        for i in 0..<(w * h) {
            let alpha = Double(rgba[4 * i + 3]) / 255
            let r = average.r * (1 - alpha) + alpha / 255 * Double(rgba[4 * i])
            let g = average.g * (1 - alpha) + alpha / 255 * Double(rgba[4 * i + 1])
            let b = average.b * (1 - alpha) + alpha / 255 * Double(rgba[4 * i + 2])
            l[i] = (r + g + b) / 3
            p[i] = (r + g) / 2 - b
            q[i] = r - g
            a[i] = alpha
        }
        let (lDC, lAC, lScale) = encodeChannel(l, width: w, height: h, nx: max(3, lx), ny: max(3, ly))
        let (pDC, pAC, pScale) = encodeChannel(p, width: w, height: h, nx: 3, ny: 3)
        let (qDC, qAC, qScale) = encodeChannel(q, width: w, height: h, nx: 3, ny: 3)
        let (aDC, aAC, aScale) = hasAlpha ? encodeChannel(a, width: w, height: h, nx: 5, ny: 5) : (1, [], 1)

        let isLandscape = w > h
        let header24 =
            round(63 * lDC) | round(31.5 + 31.5 * pDC) << 6 | round(31.5 + 31.5 * qDC) << 12
            | round(31 * lScale) << 18 | (hasAlpha ? 1 << 23 : 0)
        let header16 =
            (isLandscape ? ly : lx) | round(63 * pScale) << 3 | round(63 * qScale) << 9 | (isLandscape ? 1 << 15 : 0)
        var hash: [UInt8] = [
            UInt8(header24 & 255), UInt8(header24 >> 8 & 255), UInt8(header24 >> 16 & 255),
            UInt8(header16 & 255), UInt8(header16 >> 8 & 255),
        ]
        if hasAlpha { hash.append(UInt8(round(15 * aDC) | round(15 * aScale) << 4)) }
        // The AC terms, four bits each, low nibble first.
        var index = 0
        for ac in hasAlpha ? [lAC, pAC, qAC, aAC] : [lAC, pAC, qAC] {
            for f in ac {
                let nibble = UInt8(round(15 * f))
                if index & 1 == 0 { hash.append(nibble) } else { hash[hash.count - 1] |= nibble << 4 }
                index += 1
            }
        }
        return hash
    }

    /// The hash of a decoded image (1 or 4 channels), first shrunk to fit 100×100.
    static func encode(_ image: PixelBuffer) -> [UInt8] {
        var image = image
        if image.width > maxEdge || image.height > maxEdge {
            let scale = Double(maxEdge) / Double(max(image.width, image.height))
            image = ImagePipeline.resample(
                image, width: max(1, Int((Double(image.width) * scale).rounded())),
                height: max(1, Int((Double(image.height) * scale).rounded())))
        }
        var rgba = [UInt8](repeating: 255, count: image.width * image.height * 4)
        for i in 0..<(image.width * image.height) {
            for c in 0..<3 { rgba[4 * i + c] = image.bytes[i * image.channels + (image.channels == 1 ? 0 : c)] }
        }
        return encode(width: image.width, height: image.height, rgba: rgba)
    }

    /// The placeholder a hash describes: at most 32×32 RGBA pixels in its approximate aspect ratio;
    /// nil when the bytes are too short to be a hash.
    public static func decode(_ hash: [UInt8]) -> (width: Int, height: Int, rgba: [UInt8])? {
        guard hash.count >= 5 else { return nil }
        let header24 = Int(hash[0]) | Int(hash[1]) << 8 | Int(hash[2]) << 16
        let header16 = Int(hash[3]) | Int(hash[4]) << 8
        let lDC = Double(header24 & 63) / 63
        let pDC = Double(header24 >> 6 & 63) / 31.5 - 1
        let qDC = Double(header24 >> 12 & 63) / 31.5 - 1
        let lScale = Double(header24 >> 18 & 31) / 31
        let hasAlpha = header24 >> 23 != 0
        let pScale = Double(header16 >> 3 & 63) / 63
        let qScale = Double(header16 >> 9 & 63) / 63
        let isLandscape = header16 >> 15 != 0
        let lMax = hasAlpha ? 5 : 7
        let lx = max(3, isLandscape ? lMax : header16 & 7)
        let ly = max(3, isLandscape ? header16 & 7 : lMax)
        guard !hasAlpha || hash.count >= 6 else { return nil }
        let aDC = hasAlpha ? Double(hash[5] & 15) / 15 : 1
        let aScale = hasAlpha ? Double(hash[5] >> 4) / 15 : 1
        // The AC terms; chroma saturation boosted 1.25× against quantization, as the reference does.
        var index = 0
        let start = hasAlpha ? 6 : 5
        func channel(_ nx: Int, _ ny: Int, _ scale: Double) -> [Double]? {
            var ac: [Double] = []
            for cy in 0..<ny {
                var cx = cy > 0 ? 0 : 1
                while cx * ny < nx * (ny - cy) {
                    let byte = start + index >> 1
                    guard byte < hash.count else { return nil }
                    let bits = Int(hash[byte]) >> ((index & 1) << 2) & 15
                    ac.append((Double(bits) / 7.5 - 1) * scale)
                    index += 1
                    cx += 1
                }
            }
            return ac
        }
        guard let lAC = channel(lx, ly, lScale), let pAC = channel(3, 3, pScale * 1.25),
            let qAC = channel(3, 3, qScale * 1.25), let aAC = hasAlpha ? channel(5, 5, aScale) : []
        else { return nil }
        let ratio = aspectRatio(hash) ?? 1
        let w = round(ratio > 1 ? 32 : 32 * ratio)
        let h = round(ratio > 1 ? 32 / ratio : 32)
        var rgba = [UInt8](repeating: 0, count: w * h * 4)
        var fx = [Double](repeating: 0, count: 7)
        var fy = fx
        for y in 0..<h {
            for x in 0..<w {
                var l = lDC
                var p = pDC
                var q = qDC
                var a = aDC
                for cx in 0..<max(lx, hasAlpha ? 5 : 3) {
                    fx[cx] = cos(Double.pi / Double(w) * (Double(x) + 0.5) * Double(cx))
                }
                for cy in 0..<max(ly, hasAlpha ? 5 : 3) {
                    fy[cy] = cos(Double.pi / Double(h) * (Double(y) + 0.5) * Double(cy))
                }
                l += sum(lAC, lx, ly, fx, fy)
                p += sum(pAC, 3, 3, fx, fy)
                q += sum(qAC, 3, 3, fx, fy)
                if hasAlpha { a += sum(aAC, 5, 5, fx, fy) }
                let b = l - 2 / 3 * p
                let r = (3 * l - b + q) / 2
                let g = r - q
                let i = (y * w + x) * 4
                for (c, value) in [r, g, b, a].enumerated() { rgba[i + c] = UInt8(max(0, 255 * min(1, value))) }
            }
        }
        return (w, h, rgba)
    }

    /// Width over height of the hashed image, roughly; nil for bytes too short.
    public static func aspectRatio(_ hash: [UInt8]) -> Double? {
        guard hash.count >= 5 else { return nil }
        let hasAlpha = hash[2] & 0x80 != 0
        let isLandscape = hash[4] & 0x80 != 0
        let lx = isLandscape ? (hasAlpha ? 5 : 7) : Int(hash[3] & 7)
        let ly = isLandscape ? Int(hash[3] & 7) : (hasAlpha ? 5 : 7)
        return Double(lx) / Double(ly)
    }

    /// One channel's DC term, its AC terms normalized to 0…1, and their scale.
    private static func encodeChannel(
        _ channel: [Double], width w: Int, height h: Int, nx: Int, ny: Int
    ) -> (Double, [Double], Double) {
        var dc = 0.0
        var ac: [Double] = []
        var scale = 0.0
        var fx = [Double](repeating: 0, count: w)
        for cy in 0..<ny {
            var cx = 0
            while cx * ny < nx * (ny - cy) {
                var f = 0.0
                for x in 0..<w { fx[x] = cos(Double.pi / Double(w) * Double(cx) * (Double(x) + 0.5)) }
                for y in 0..<h {
                    let fy = cos(Double.pi / Double(h) * Double(cy) * (Double(y) + 0.5))
                    for x in 0..<w { f += channel[x + y * w] * fx[x] * fy }
                }
                f /= Double(w * h)
                if cx > 0 || cy > 0 {
                    ac.append(f)
                    scale = max(scale, abs(f))
                } else {
                    dc = f
                }
                cx += 1
            }
        }
        if scale > 0 { ac = ac.map { 0.5 + 0.5 / scale * $0 } }
        return (dc, ac, scale)
    }

    /// The AC terms of one channel evaluated at a pixel (`fx`, `fy` its cosines).
    private static func sum(_ ac: [Double], _ nx: Int, _ ny: Int, _ fx: [Double], _ fy: [Double]) -> Double {
        var total = 0.0
        var j = 0
        for cy in 0..<ny {
            var cx = cy > 0 ? 0 : 1
            let fy2 = fy[cy] * 2
            while cx * ny < nx * (ny - cy) {
                total += ac[j] * fx[cx] * fy2
                j += 1
                cx += 1
            }
        }
        return total
    }

    /// JavaScript's `Math.round` (half up) of a value the format keeps non-negative.
    private static func round(_ value: Double) -> Int { Int((value + 0.5).rounded(.down)) }
}
