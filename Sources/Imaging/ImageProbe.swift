import Foundation

/// Reads what galleryd needs to know about an image from its header alone; for a JPEG: size,
/// components, colour space, progressive or not, EXIF orientation and date, ICC profile, and the
/// quantization tables (which the preview's re-encode aligns to, see `QuantizationTables`).
///
/// It refuses unknown formats and images above the pixel limit before anything is decoded, so
/// the upload path can call it on every file. Segment layout per ITU T.81 §B.1.1.
public enum ImageProbe {
    /// Probes the file at `path`, reading only its header (for HEIF, its `meta` box).
    public static func probe(fileAt path: String, limits: ImageLimits = ImageLimits()) throws -> ImageInfo {
        let source = try FileByteSource(path: path)
        let format = try recognize(source)
        switch format {
        case .jpeg: return try probe(source: source, limits: limits)
        case .png: return try PNGHeader.probe(source: source, limits: limits)
        case .webp: return try WebPHeader.probe(source: source, limits: limits)
        case .heif, .avif: return try HEIFFile(path: path).probe(limits: limits, format: format)
        }
    }

    /// Probes an in-memory image.
    public static func probe(bytes: [UInt8], limits: ImageLimits = ImageLimits()) throws -> ImageInfo {
        let source = MemoryByteSource(bytes: bytes)
        let format = try recognize(source)
        switch format {
        case .jpeg: return try probe(source: source, limits: limits)
        case .png: return try PNGHeader.probe(source: source, limits: limits)
        case .webp: return try WebPHeader.probe(source: source, limits: limits)
        case .heif, .avif: return try HEIFFile(bytes: bytes).probe(limits: limits, format: format)
        }
    }

    /// True when the file at `path` holds all of its image data: a JPEG's end-of-image marker, a
    /// PNG's `IEND` chunk, a WebP's whole RIFF chunk, a HEIF's every top-level box. A body cut off
    /// in transit still probes (its header is whole), so uploads check this too.
    public static func isComplete(fileAt path: String, format: ImageFormat) throws -> Bool {
        switch format {
        case .jpeg: return try JPEGEndOfImage.isComplete(fileAt: path)
        case .png, .webp, .heif, .avif:
            var status = stat()
            guard stat(path, &status) == 0 else { throw ImageError.io("\(path): \(String(cString: strerror(errno)))") }
            return try ContainerEnd.isComplete(
                source: FileByteSource(path: path), format: format, fileSize: Int(status.st_size))
        }
    }

    /// The format of the first bytes, or `unsupportedFormat`.
    static func recognize(_ source: HeaderByteSource) throws -> ImageFormat {
        guard let format = ImageFormat.recognize(try source.read(at: 0, count: ImageFormat.signatureLength)) else {
            throw ImageError.unsupportedFormat
        }
        return format
    }

    /// Probes a JPEG from any byte source (file or memory).
    static func probe(source: HeaderByteSource, limits: ImageLimits) throws -> ImageInfo {
        var parser = JPEGHeaderParser(source: source, limits: limits)
        return try parser.parse()
    }
}

/// Walks the marker segments up to the first SOS, collecting header facts.
struct JPEGHeaderParser {
    /// Where the header bytes come from.
    let source: HeaderByteSource
    /// Checked as soon as the frame header is read.
    let limits: ImageLimits

    private var sawJFIF = false
    private var adobeTransform: Int?
    private var exif: EXIFReader.Fields?
    private var iccChunks: [Int: ArraySlice<UInt8>] = [:]
    private var iccChunkCount = 0
    private var iccInvalid = false
    private var frame: (width: Int, height: Int, componentIDs: [UInt8], progressive: Bool)?
    /// Per component: sampling factors and quantization table slot (Tq).
    private var frameComponents: [(h: Int, v: Int, table: Int)] = []
    /// DQT tables by slot 0…3, natural order.
    private var quantTables: [Int: [UInt16]] = [:]

    /// A parser positioned before SOI.
    init(source: HeaderByteSource, limits: ImageLimits) {
        self.source = source
        self.limits = limits
    }

    /// Largest segment payload we read into memory (a marker length field is 16 bits).
    private static let maxSegment = 65_535

    /// Walks the segments up to the first SOS and returns what they say.
    mutating func parse() throws -> ImageInfo {
        let soi = try source.read(at: 0, count: 2)
        guard soi.count == 2, soi.first == 0xFF, soi.last == 0xD8 else { throw ImageError.unsupportedFormat }
        var offset = 2
        while true {
            // A marker is 0xFF (any number of fill bytes) followed by a code (§B.1.1.2).
            var header = try source.read(at: offset, count: 4)
            guard header.count >= 2 else { throw ImageError.truncated }
            guard header.first == 0xFF else {
                throw ImageError.corrupt("expected a marker at byte \(offset)")
            }
            var code = header[header.startIndex + 1]
            while code == 0xFF {
                offset += 1
                header = try source.read(at: offset, count: 4)
                guard header.count >= 2 else { throw ImageError.truncated }
                code = header[header.startIndex + 1]
            }
            offset += 2
            switch code {
            case 0x01, 0xD0...0xD7:  // TEM, RSTn: no length
                continue
            case 0xD8:
                throw ImageError.corrupt("second SOI marker in the header")
            case 0xD9:
                throw ImageError.corrupt("end of image before any scan")
            default:
                break
            }
            guard header.count >= 4 else { throw ImageError.truncated }
            let length = Int(header[header.startIndex + 2]) << 8 | Int(header[header.startIndex + 3])
            guard length >= 2 else { throw ImageError.corrupt("segment length \(length) at byte \(offset)") }
            let payloadOffset = offset + 2
            let payloadLength = length - 2
            offset += length

            switch code {
            case 0xDA:  // SOS: the header is over.
                guard frame != nil else { throw ImageError.corrupt("scan before frame header") }
                // The scan header itself must be there, or libjpeg would fail on a truncated file.
                let sos = try source.read(at: payloadOffset, count: payloadLength)
                guard sos.count == payloadLength else { throw ImageError.truncated }
                return try makeInfo()
            case 0xC0, 0xC1, 0xC2, 0xC9, 0xCA:  // SOF0/1/2 and arithmetic SOF9/10, all libjpeg decodes
                try parseFrame(read(payloadOffset, payloadLength), progressive: code == 0xC2 || code == 0xCA)
            case 0xC3, 0xC5, 0xC6, 0xC7, 0xCB, 0xCD, 0xCE, 0xCF:  // lossless, hierarchical
                throw ImageError.unsupportedFormat
            case 0xE0 where !sawJFIF:
                let payload = try read(payloadOffset, min(payloadLength, 5))
                sawJFIF = payload.elementsEqual([0x4A, 0x46, 0x49, 0x46, 0x00])  // "JFIF\0"
            case 0xE1 where exif == nil:
                let prefix = try read(payloadOffset, min(payloadLength, 6))
                if prefix.elementsEqual([0x45, 0x78, 0x69, 0x66, 0, 0]) {
                    exif = EXIFReader.parse(app1: try read(payloadOffset, payloadLength))
                }
            case 0xDB:
                try parseQuantTables(read(payloadOffset, payloadLength))
            case 0xE2:
                try collectICC(payloadOffset: payloadOffset, payloadLength: payloadLength)
            case 0xEE where adobeTransform == nil:
                let payload = try read(payloadOffset, min(payloadLength, 12))
                if payload.count >= 12, payload.prefix(5).elementsEqual([0x41, 0x64, 0x6F, 0x62, 0x65]) {  // "Adobe"
                    adobeTransform = Int(payload[payload.startIndex + 11])
                }
            default:
                break
            }
        }
    }

    private func read(_ offset: Int, _ count: Int) throws -> ArraySlice<UInt8> {
        let bytes = try source.read(at: offset, count: count)
        guard bytes.count == count else { throw ImageError.truncated }
        return bytes
    }

    /// SOFn (§B.2.2): precision, height, width, components.
    private mutating func parseFrame(_ payload: ArraySlice<UInt8>, progressive: Bool) throws {
        guard frame == nil else { throw ImageError.corrupt("more than one frame header") }
        let p = Array(payload)
        guard p.count >= 6 else { throw ImageError.corrupt("short frame header") }
        let precision = Int(p[0])
        let height = Int(p[1]) << 8 | Int(p[2])
        let width = Int(p[3]) << 8 | Int(p[4])
        let count = Int(p[5])
        guard precision == 8 else { throw ImageError.decodeFailed("\(precision)-bit samples are not supported") }
        guard width > 0, height > 0 else { throw ImageError.corrupt("image size \(width)×\(height)") }
        guard width * height <= limits.maxPixels else {
            throw ImageError.tooManyPixels(width: width, height: height, limit: limits.maxPixels)
        }
        guard count == 1 || count == 3 || count == 4 else {
            throw ImageError.decodeFailed("\(count) colour components are not supported")
        }
        guard p.count >= 6 + 3 * count else { throw ImageError.corrupt("short frame header") }
        let ids = (0..<count).map { p[6 + 3 * $0] }
        frameComponents = (0..<count).map { c in
            let sampling = Int(p[7 + 3 * c])
            return (sampling >> 4, sampling & 15, Int(p[8 + 3 * c]))
        }
        frame = (width, height, ids, progressive)
    }

    /// DQT (§B.2.4.1): one or more tables, each a precision/slot byte and 64 steps in zig-zag order.
    /// A malformed table is ignored (libjpeg decides whether the file decodes), it only costs the
    /// preview its aligned re-encode.
    private mutating func parseQuantTables(_ payload: ArraySlice<UInt8>) {
        var i = payload.startIndex
        while i < payload.endIndex {
            let precision = Int(payload[i] >> 4)
            let slot = Int(payload[i] & 15)
            let size = precision == 0 ? 64 : 128
            guard precision <= 1, slot <= 3, payload.endIndex - (i + 1) >= size else { return }
            var steps = [UInt16](repeating: 0, count: 64)
            for k in 0..<64 {
                let value =
                    precision == 0
                    ? UInt16(payload[i + 1 + k]) : UInt16(payload[i + 1 + 2 * k]) << 8 | UInt16(payload[i + 2 + 2 * k])
                steps[Self.zigzag[k]] = value
            }
            quantTables[slot] = steps
            i += 1 + size
        }
    }

    /// Natural-order index of the k-th coefficient in zig-zag order (T.81 Figure A.6).
    static let zigzag: [Int] = [
        0, 1, 8, 16, 9, 2, 3, 10, 17, 24, 32, 25, 18, 11, 4, 5,
        12, 19, 26, 33, 40, 48, 41, 34, 27, 20, 13, 6, 7, 14, 21, 28,
        35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23, 30, 37, 44, 51,
        58, 59, 52, 45, 38, 31, 39, 46, 53, 60, 61, 54, 47, 55, 62, 63,
    ]

    /// Every component's table, or none when one is missing or has a zero step.
    private func componentQuantization() -> [ComponentQuantization] {
        var result: [ComponentQuantization] = []
        for component in frameComponents {
            guard let steps = quantTables[component.table], !steps.contains(0) else { return [] }
            result.append(
                ComponentQuantization(horizontalSampling: component.h, verticalSampling: component.v, steps: steps))
        }
        return result
    }

    /// APP2 `ICC_PROFILE\0` chunks: sequence number (1-based) and chunk count, then data (ICC.1 §B.4).
    private mutating func collectICC(payloadOffset: Int, payloadLength: Int) throws {
        let signature: [UInt8] = Array("ICC_PROFILE".utf8) + [0]
        guard payloadLength > 14 else { return }
        let payload = try read(payloadOffset, payloadLength)
        guard payload.prefix(12).elementsEqual(signature) else { return }
        let sequence = Int(payload[payload.startIndex + 12])
        let count = Int(payload[payload.startIndex + 13])
        if iccChunkCount == 0 { iccChunkCount = count }
        guard count == iccChunkCount, sequence >= 1, sequence <= count, iccChunks[sequence] == nil else {
            iccInvalid = true
            return
        }
        iccChunks[sequence] = payload.dropFirst(14)
    }

    private func assembledICC() -> [UInt8]? {
        guard !iccInvalid, iccChunkCount > 0, iccChunks.count == iccChunkCount else { return nil }
        var profile: [UInt8] = []
        for sequence in 1...iccChunkCount { profile += iccChunks[sequence]! }
        return profile
    }

    /// Colour space as libjpeg's default_decompress_parms decides it (jdapimin.c).
    private func colorSpace(componentIDs ids: [UInt8]) -> ImageColorSpace {
        switch ids.count {
        case 1:
            return .grayscale
        case 3:
            if sawJFIF { return .ycbcr }
            if let adobeTransform { return adobeTransform == 0 ? .rgb : .ycbcr }
            if ids == [0x52, 0x47, 0x42] { return .rgb }  // 'R','G','B'
            return .ycbcr
        default:
            if let adobeTransform { return adobeTransform == 0 ? .cmyk : .ycck }
            return .cmyk
        }
    }

    private func makeInfo() throws -> ImageInfo {
        guard let frame else { throw ImageError.corrupt("no frame header") }
        return ImageInfo(
            width: frame.width, height: frame.height, orientation: exif?.orientation ?? 1,
            components: frame.componentIDs.count, colorSpace: colorSpace(componentIDs: frame.componentIDs),
            isProgressive: frame.progressive, iccProfile: assembledICC(), takenAt: exif?.takenAt,
            cameraMake: exif?.make, cameraModel: exif?.model,
            hasAdobeMarker: adobeTransform != nil, componentQuantization: componentQuantization())
    }
}
