import CWebP

/// Reads a WebP's size from its first chunk (libwebp's `WebPGetFeatures`, which parses the VP8,
/// VP8L or VP8X header and nothing more) and its ICC profile and EXIF date from the extended
/// format's chunks (WebP container specification, "Extended File Format"). Nothing is decoded:
/// the pixel limit is checked on the canvas size first.
enum WebPHeader {
    /// ICCP and EXIF chunks are read up to this size; larger ones are skipped.
    static let maxChunk = 4 << 20
    /// Bytes handed to `WebPGetFeatures`: the RIFF header and the first chunk's header.
    static let featureBytes = 64

    /// What the header says, or an error before any decode.
    static func probe(source: HeaderByteSource, limits: ImageLimits) throws -> ImageInfo {
        let head = Array(try source.read(at: 0, count: featureBytes))
        var features = WebPBitstreamFeatures()
        let status = head.withUnsafeBufferPointer { WebPGetFeatures($0.baseAddress, $0.count, &features) }
        switch status {
        case VP8_STATUS_OK: break
        case VP8_STATUS_NOT_ENOUGH_DATA: throw ImageError.truncated
        default: throw ImageError.corrupt("WebP header (libwebp status \(status.rawValue))")
        }
        let width = Int(features.width)
        let height = Int(features.height)
        guard width > 0, height > 0 else { throw ImageError.corrupt("WebP size \(width)×\(height)") }
        guard width * height <= limits.maxPixels else {
            throw ImageError.tooManyPixels(width: width, height: height, limit: limits.maxPixels)
        }
        var profile: [UInt8]?
        var exif: EXIFReader.Fields?
        // Only the extended format (VP8X first) has more chunks worth reading.
        if head.count >= 16, head[12..<16].elementsEqual("VP8X".utf8) {
            // EXIF follows the image data: walk every chunk header (bounded for animations).
            var offset = 12
            for _ in 0..<64 {
                let header = try source.read(at: offset, count: 8)
                guard header.count == 8 else { break }
                let type = String(decoding: header.prefix(4), as: UTF8.self)
                let length = header.suffix(4).reversed().reduce(0) { $0 << 8 | Int($1) }
                let data = offset + 8
                if length <= maxChunk {
                    if type == "ICCP" {
                        profile = Array(try source.read(at: data, count: length))
                    } else if type == "EXIF" {
                        var block = try source.read(at: data, count: length)
                        let prefix: [UInt8] = [0x45, 0x78, 0x69, 0x66, 0, 0]  // "Exif\0\0", written by some tools
                        if block.starts(with: prefix) { block = block.dropFirst(6) }
                        exif = EXIFReader.parse(app1: prefix[...] + block)
                    }
                }
                offset = data + length + (length & 1)
            }
        }
        return ImageInfo(
            width: width, height: height, components: 3, colorSpace: .rgb, isProgressive: false, iccProfile: profile,
            takenAt: exif?.takenAt, cameraMake: exif?.make, cameraModel: exif?.model, format: .webp)
    }
}
