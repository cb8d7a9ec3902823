import Foundation

/// 10-bit HEIC and AVIF originals in the transfers galleryd converts (decision 074): a 16-bit PNG
/// whose code values are computed here from the light each pixel should carry (PQ, HLG, linear,
/// a 2.2 or 2.8 gamma or sRGB's curve), coded by `heif-enc -b 10`, its image wrapped by `HEIFAssembler`
/// with the nclx `colr` box that says the transfer. libheif 1.15's `heif-enc` takes
/// `--colour_primaries` and `--transfer_characteristic` but writes no `colr` box for a HEIC and an
/// unspecified 2/2/6 one for an AVIF, coding with the BT.601 matrix (6) at full range either way,
/// which is the matrix the box written here names.
public enum HDRFixtures {
    /// A transfer characteristics code (ITU-T H.273 Table 3) and how light becomes its code values.
    public enum Transfer: Sendable {
        case sRGB, linear, gamma22, gamma28, pq, hlg

        /// The nclx code.
        public var code: Int {
            switch self {
            case .sRGB: 13
            case .linear: 8
            case .gamma22: 4
            case .gamma28: 5
            case .pq: 16
            case .hlg: 18
            }
        }

        /// The code values (0…1) of display light `rgb`: cd/m² for PQ and HLG (a 1000 cd/m² HLG
        /// display, BT.2020 primaries), relative to white (0…1) for the SDR curves.
        public func signal(_ rgb: (Double, Double, Double)) -> (Double, Double, Double) {
            switch self {
            case .sRGB:
                let f = { (v: Double) in v <= 0.0031308 ? 12.92 * v : 1.055 * pow(v, 1 / 2.4) - 0.055 }
                return (f(rgb.0), f(rgb.1), f(rgb.2))
            case .linear: return rgb
            case .gamma22: return (pow(rgb.0, 1 / 2.2), pow(rgb.1, 1 / 2.2), pow(rgb.2, 1 / 2.2))
            case .gamma28: return (pow(rgb.0, 1 / 2.8), pow(rgb.1, 1 / 2.8), pow(rgb.2, 1 / 2.8))
            case .pq: return (Self.pq(rgb.0), Self.pq(rgb.1), Self.pq(rgb.2))
            case .hlg:
                // BT.2100's inverse OOTF (Lw = 1000 cd/m², γ = 1.2, BT.2020's luminance), then its OETF.
                let yd = 0.2627 * rgb.0 + 0.6780 * rgb.1 + 0.0593 * rgb.2
                guard yd > 0 else { return (0, 0, 0) }
                let ys = pow(yd / 1000, 1 / 1.2)
                let k = 1000 * pow(ys, 0.2)
                return (Self.hlg(rgb.0 / k), Self.hlg(rgb.1 / k), Self.hlg(rgb.2 / k))
            }
        }

        /// SMPTE ST 2084's inverse EOTF (BT.2100 Table 4), cd/m² → signal.
        static func pq(_ luminance: Double) -> Double {
            let (m1, m2) = (0.1593017578125, 78.84375)
            let (c1, c2, c3) = (0.8359375, 18.8515625, 18.6875)
            let y = pow(min(max(luminance, 0) / 10000, 1), m1)
            return pow((c1 + c2 * y) / (1 + c3 * y), m2)
        }

        /// HLG's OETF (BT.2100 Table 5), scene light 0…1 → signal.
        static func hlg(_ e: Double) -> Double {
            let a = 0.17883277
            let (b, c) = (1 - 4 * a, 0.5 - a * log(4 * a))
            return e <= 1.0 / 12 ? (3 * e).squareRoot() : a * log(12 * e - b) + c
        }
    }

    /// Side of each square patch.
    public static let patch = 64

    /// `patches` side by side (display light as `Transfer.signal` takes it), 64×64 each, as a
    /// HEIC (or an AVIF) of `bits` bits whose nclx says `transfer` and `primaries`, with a `clli`
    /// box of `lightLevel` cd/m² when given.
    public static func file(
        patches: [(Double, Double, Double)], transfer: Transfer, primaries: Int = 9, avif: Bool = false,
        bits: Int = 10, lightLevel: Int? = nil
    ) throws -> [UInt8] {
        let codes = patches.map { transfer.signal($0) }
        // heif-enc 1.15 aborts on `-b 8` with a 16-bit PNG: an 8-bit file is coded from an 8-bit PNG.
        let top = bits == 8 ? 255.0 : 65535.0
        let png = png16(width: patch * patches.count, height: patch, eightBit: bits == 8) { x, _ in
            let c = codes[x / patch]
            return [c.0, c.1, c.2].map { Int((min(max($0, 0), 1) * top).rounded()) }
        }
        return try file(
            png: png, width: patch * patches.count, height: patch, transfer: transfer.code,
            primaries: primaries, avif: avif, bits: bits, lightLevel: lightLevel)
    }

    /// A 16-bit `png` (8-bit when `bits` is 8) coded by `heif-enc -b bits` (4:4:4 for HEVC; 4:2:2 for AV1, the one
    /// chroma format Debian's aom codes at 10 bits through libheif 1.15), wrapped with an nclx
    /// `colr` box of `transfer` and `primaries`.
    public static func file(
        png: [UInt8], width: Int, height: Int, transfer: Int, primaries: Int = 9, avif: Bool = false,
        bits: Int = 10, lightLevel: Int? = nil
    ) throws -> [UInt8] {
        let options =
            (bits == 8 ? [] : ["-b", "\(bits)"]) + ["-q", "95", "-p", avif ? "chroma=422" : "chroma=444"]
            + (avif ? ["-A"] : [])
        let coded = try heifEnc(png, options: options, avif: avif)
        let tile = HEIFAssembler.Tile(heifEncOutput: coded, width: width, height: height)
        return HEIFAssembler.assemble(
            tiles: [tile], grid: false, colour: .nclx(primaries: primaries, transfer: transfer),
            lightLevel: lightLevel)
    }

    /// `heif-enc` with `options` on `png`.
    public static func heifEnc(_ png: [UInt8], options: [String], avif: Bool) throws -> [UInt8] {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hdr-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = directory.appendingPathComponent("in.png")
        let output = directory.appendingPathComponent(avif ? "out.avif" : "out.heic")
        try Data(png).write(to: input)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["heif-enc"] + options + ["-o", output.path, input.path]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0, let data = FileManager.default.contents(atPath: output.path) else {
            throw TestSetupError(description: "heif-enc \(options) failed")
        }
        return [UInt8](data)
    }

    /// A 16-bit RGB PNG of `pixel(x, y)` (three values 0…65535; 0…255 and an 8-bit PNG when
    /// `eightBit`), its image data in stored (uncompressed) deflate blocks.
    public static func png16(width: Int, height: Int, eightBit: Bool = false, pixel: (Int, Int) -> [Int]) -> [UInt8] {
        var raw: [UInt8] = []
        raw.reserveCapacity(height * (1 + width * 6))
        for y in 0..<height {
            raw.append(0)
            for x in 0..<width {
                for v in pixel(x, y) { raw += eightBit ? [UInt8(v & 0xFF)] : [UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
            }
        }
        var zlib: [UInt8] = [0x78, 0x01]
        var at = 0
        repeat {
            let n = min(65535, raw.count - at)
            let last: UInt8 = at + n == raw.count ? 1 : 0
            zlib += [last, UInt8(n & 0xFF), UInt8(n >> 8), UInt8(~n & 0xFF), UInt8(~n >> 8 & 0xFF)]
            zlib += raw[at..<at + n]
            at += n
        } while at < raw.count
        var (a, b): (UInt32, UInt32) = (1, 0)
        for byte in raw {
            a = (a + UInt32(byte)) % 65521
            b = (b + a) % 65521
        }
        zlib += HEIFAssembler.u32(Int(b << 16 | a))
        let u32 = HEIFAssembler.u32
        func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
            let body = Array(type.utf8) + data
            return u32(data.count) + body + u32(Int(crc32(body)))
        }
        return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
            + chunk("IHDR", u32(width) + u32(height) + [eightBit ? 8 : 16, 2, 0, 0, 0]) + chunk("IDAT", zlib)
            + chunk("IEND", [])
    }

    /// CRC-32 (ISO 3309), as PNG's chunks carry it.
    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? 0xEDB8_8320 ^ (crc >> 1) : crc >> 1 }
        }
        return ~crc
    }
}
