/// Whether a PNG, WebP or HEIF file holds all of its data, from its structure alone: the
/// counterpart of `JPEGEndOfImage` for the other formats.
enum ContainerEnd {
    /// PNG: the file ends with an `IEND` chunk (PNG spec §11.2.5); WebP: the RIFF chunk's declared
    /// size fits in the file; HEIF: every top-level box fits (ISO/IEC 14496-12 §4.2), so an `mdat`
    /// cut off in transit is caught.
    static func isComplete(source: HeaderByteSource, format: ImageFormat, fileSize: Int) throws -> Bool {
        switch format {
        case .png:
            let iend: [UInt8] = [0, 0, 0, 0, 0x49, 0x45, 0x4E, 0x44, 0xAE, 0x42, 0x60, 0x82]
            guard fileSize >= 8 + iend.count else { return false }
            return try source.read(at: fileSize - iend.count, count: iend.count).elementsEqual(iend)
        case .webp:
            let header = try source.read(at: 4, count: 4)
            guard header.count == 4 else { return false }
            let riffSize = header.reversed().reduce(0) { $0 << 8 | Int($1) }
            return 8 + riffSize <= fileSize
        case .heif, .avif:
            var offset = 0
            while offset < fileSize {
                let bytes = try source.read(at: offset, count: 16)
                guard let header = try? ISOBMFFBoxes.header(bytes) else { return false }
                guard let size = header.size else { return true }  // the box runs to the end of the file
                guard size <= fileSize - offset else { return false }
                offset += size
            }
            return true
        case .jpeg:
            return JPEGEndOfImage.isComplete(bytes: Array(try source.read(at: 0, count: fileSize)))
        }
    }
}
