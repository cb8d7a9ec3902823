import CZlib

/// Reads a PNG's size, ICC profile and EXIF date from the chunks before its image data
/// (PNG spec, 3rd edition §5.3, §11.2.2 IHDR, §11.3.2.3 iCCP, §11.3.6.1 eXIf), without
/// inflating any pixel: the pixel limit is checked on IHDR, before libpng allocates a row.
enum PNGHeader {
    /// Chunks before IDAT are read into memory up to this size each (a profile or an EXIF block);
    /// larger ones are skipped.
    static let maxChunk = 4 << 20
    /// Largest inflated ICC profile kept.
    static let maxProfile = 4 << 20

    /// Walks the chunks from the signature to the first IDAT.
    static func probe(source: HeaderByteSource, limits: ImageLimits) throws -> ImageInfo {
        var offset = 8
        var size: (width: Int, height: Int)?
        var profile: [UInt8]?
        var exif: EXIFReader.Fields?
        while true {
            let header = try source.read(at: offset, count: 8)
            guard header.count == 8 else { throw ImageError.truncated }
            let length = header.prefix(4).reduce(0) { $0 << 8 | Int($1) }
            let type = String(decoding: header.suffix(4), as: UTF8.self)
            guard length <= 0x7FFF_FFFF else { throw ImageError.corrupt("PNG chunk length \(length)") }
            let dataOffset = offset + 8
            offset = dataOffset + length + 4  // data and CRC
            if size == nil, type != "IHDR" { throw ImageError.corrupt("PNG does not start with IHDR") }
            switch type {
            case "IHDR":
                let data = Array(try source.read(at: dataOffset, count: 13))
                guard length == 13, data.count == 13 else { throw ImageError.corrupt("short PNG IHDR") }
                try checkIHDR(data, crc: Array(try source.read(at: dataOffset + 13, count: 4)))
                let width = data[0..<4].reduce(0) { $0 << 8 | Int($1) }
                let height = data[4..<8].reduce(0) { $0 << 8 | Int($1) }
                guard width > 0, height > 0, width <= 0x7FFF_FFFF, height <= 0x7FFF_FFFF else {
                    throw ImageError.corrupt("PNG size \(width)×\(height)")
                }
                guard width * height <= limits.maxPixels else {
                    throw ImageError.tooManyPixels(width: width, height: height, limit: limits.maxPixels)
                }
                size = (width, height)
            case "iCCP" where length <= maxChunk && profile == nil:
                profile = inflateProfile(try source.read(at: dataOffset, count: length))
            case "eXIf" where length <= maxChunk && exif == nil:
                exif = EXIFReader.parse(
                    app1: [0x45, 0x78, 0x69, 0x66, 0, 0] + (try source.read(at: dataOffset, count: length)))
            case "IDAT", "IEND":
                guard let size else { throw ImageError.corrupt("PNG without IHDR") }
                guard type == "IDAT" else { throw ImageError.corrupt("PNG without image data") }
                return ImageInfo(
                    width: size.width, height: size.height, components: 3, colorSpace: .rgb, isProgressive: false,
                    iccProfile: profile, takenAt: exif?.takenAt, cameraMake: exif?.make,
                    cameraModel: exif?.model, format: .png)
            default:
                break
            }
        }
    }

    /// Bit depths each colour type allows (PNG spec, 3rd edition, Table 11.1).
    static let bitDepths: [UInt8: Set<UInt8>] = [
        0: [1, 2, 4, 8, 16], 2: [8, 16], 3: [1, 2, 4, 8], 4: [8, 16], 6: [8, 16],
    ]

    /// Refuses an IHDR libpng would refuse when it decodes (§11.2.2: its CRC, a colour type with a
    /// bit depth it does not allow, a compression or filter method other than 0, an interlace
    /// method other than 0 or 1), so that such a file is refused at upload (130), as a JPEG with a
    /// broken header is, not stored and failed by the worker.
    static func checkIHDR(_ data: [UInt8], crc: [UInt8]) throws {
        guard crc.count == 4 else { throw ImageError.truncated }
        let computed = (Array("IHDR".utf8) + data).withUnsafeBufferPointer { CZlib.crc32(0, $0.baseAddress, 17) }
        let stored = crc.reduce(uLong(0)) { $0 << 8 | uLong($1) }
        guard computed == stored else { throw ImageError.corrupt("PNG IHDR CRC") }
        let (depth, colorType) = (data[8], data[9])
        guard bitDepths[colorType]?.contains(depth) == true else {
            throw ImageError.corrupt("PNG colour type \(colorType) with bit depth \(depth)")
        }
        guard data[10] == 0, data[11] == 0, data[12] <= 1 else {
            throw ImageError.corrupt(
                "PNG compression, filter or interlace method \(data[10]), \(data[11]), \(data[12])")
        }
    }

    /// iCCP: a profile name (1–79 bytes), a NUL, the compression method (0, zlib) and the zlib
    /// stream. Nil when any of it is malformed: the image is still shown, in sRGB.
    static func inflateProfile(_ data: ArraySlice<UInt8>) -> [UInt8]? {
        guard let nul = data.prefix(80).firstIndex(of: 0), nul + 1 < data.endIndex, data[nul + 1] == 0 else {
            return nil
        }
        let compressed = Array(data[(nul + 2)...])
        var capacity = 64 << 10
        while capacity <= maxProfile {
            var output = [UInt8](repeating: 0, count: capacity)
            var length = uLongf(capacity)
            let status = output.withUnsafeMutableBufferPointer { out in
                compressed.withUnsafeBufferPointer { input in
                    uncompress(out.baseAddress, &length, input.baseAddress, uLong(input.count))
                }
            }
            if status == Z_OK {
                output.removeSubrange(Int(length)...)
                return output
            }
            guard status == Z_BUF_ERROR else { return nil }
            capacity *= 4
        }
        return nil
    }
}
