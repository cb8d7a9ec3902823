import CZlib

/// A small PNG encoder for the tests, so every PNG flavour the decoder must read is generated
/// here rather than committed: grey, RGB, palette (with `tRNS`), grey+alpha and RGBA; 8 or 16
/// bits; `gAMA`, `sRGB`, `iCCP`, `eXIf` and `cICP` chunks; Adam7 interlacing (PNG spec, 3rd edition §§7–8, 11).
struct PNGWriter {
    /// PNG colour types (§11.2.2 Table 8).
    enum ColorType: UInt8 {
        case gray = 0
        case rgb = 2
        case palette = 3
        case grayAlpha = 4
        case rgba = 6

        /// Samples per pixel.
        var channels: Int { [1, 0, 3, 1, 2, 0, 4][Int(rawValue)] }
    }

    var width: Int
    var height: Int
    var colorType: ColorType
    /// 8 or 16.
    var bitDepth = 8
    var interlaced = false
    /// Palette entries (r, g, b, a); a `tRNS` chunk is written when any alpha is below 255.
    var palette: [(UInt8, UInt8, UInt8, UInt8)] = []
    /// `gAMA`: image gamma × 100000 (45455 is sRGB's approximate 1/2.2; 100000 is linear).
    var gamma: UInt32?
    /// `sRGB`: the rendering intent (0…3).
    var srgbIntent: UInt8?
    /// Raw ICC profile, compressed into an `iCCP` chunk.
    var iccProfile: [UInt8]?
    /// A TIFF structure for an `eXIf` chunk.
    var exif: [UInt8]?
    /// A `cICP` chunk: colour primaries, transfer, matrix (0) and full-range flag (PNG 3rd edition §11.3.2.6).
    var cicp: [UInt8]?
    /// The samples of pixel (x, y): `colorType.channels` values, 0…255 or 0…65535 (palette: an index).
    var pixel: (Int, Int) -> [Int]

    /// The encoded file.
    func encode() -> [UInt8] {
        var file: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        file += Self.chunk(
            "IHDR",
            Self.u32(width) + Self.u32(height) + [UInt8(bitDepth), colorType.rawValue, 0, 0, interlaced ? 1 : 0])
        if let gamma { file += Self.chunk("gAMA", Self.u32(Int(gamma))) }
        if let srgbIntent { file += Self.chunk("sRGB", [srgbIntent]) }
        if let iccProfile {
            file += Self.chunk("iCCP", Array("test profile".utf8) + [0, 0] + Self.deflate(iccProfile))
        }
        if let exif { file += Self.chunk("eXIf", exif) }
        if let cicp { file += Self.chunk("cICP", cicp) }
        if colorType == .palette {
            file += Self.chunk("PLTE", palette.flatMap { [$0.0, $0.1, $0.2] })
            if palette.contains(where: { $0.3 < 255 }) { file += Self.chunk("tRNS", palette.map { $0.3 }) }
        }
        file += Self.chunk("IDAT", Self.deflate(scanlines()))
        file += Self.chunk("IEND", [])
        return file
    }

    /// Filter-type-0 scanlines, for the whole image or pass by pass (Adam7, §8.2).
    private func scanlines() -> [UInt8] {
        let passes =
            interlaced
            ? [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]
            : [(0, 0, 1, 1)]
        var data: [UInt8] = []
        for (x0, y0, dx, dy) in passes {
            guard x0 < width, y0 < height else { continue }
            for y in stride(from: y0, to: height, by: dy) {
                data.append(0)
                for x in stride(from: x0, to: width, by: dx) {
                    for sample in pixel(x, y) {
                        if bitDepth == 16 {
                            data += [UInt8(sample >> 8), UInt8(sample & 0xFF)]
                        } else {
                            data.append(UInt8(sample))
                        }
                    }
                }
            }
        }
        return data
    }

    static func u32(_ v: Int) -> [UInt8] {
        [UInt8(v >> 24 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)]
    }

    static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let body = Array(type.utf8) + data
        let crc = body.withUnsafeBufferPointer { crc32(0, $0.baseAddress, uInt($0.count)) }
        return u32(data.count) + body + u32(Int(crc))
    }

    static func deflate(_ data: [UInt8]) -> [UInt8] {
        var length = compressBound(uLong(data.count))
        var out = [UInt8](repeating: 0, count: Int(length))
        _ = out.withUnsafeMutableBufferPointer { o in
            data.withUnsafeBufferPointer { compress(o.baseAddress, &length, $0.baseAddress, uLong(data.count)) }
        }
        return Array(out.prefix(Int(length)))
    }
}
