/// The container formats galleryd accepts as originals, recognised by their first bytes (never
/// by a file name or a `Content-Type`).
public enum ImageFormat: String, Sendable, Equatable, CaseIterable {
    /// JPEG (ITU T.81): the SOI marker `FF D8` (the JPEG probe judges the rest).
    case jpeg
    /// PNG: the 8-byte signature (PNG spec §5.2).
    case png
    /// WebP: a RIFF file of form type `WEBP`, lossy (VP8), lossless (VP8L) or extended (VP8X).
    case webp
    /// HEIF with HEVC images (ISO/IEC 23008-12): brands `heic`, `heix`, `hevc`, `hevx`, `heim`,
    /// `heis`, `mif1`, `msf1`, or any HEIF file whose brands are not AV1's.
    case heif
    /// AVIF (HEIF with AV1 images): brands `avif`, `avis`.
    case avif

    /// Bytes `recognize` needs: enough for an `ftyp` box with a few compatible brands.
    public static let signatureLength = 64

    /// The format of data starting with `header`, nil when it is none of these.
    public static func recognize(_ header: ArraySlice<UInt8>) -> ImageFormat? {
        let h = Array(header)
        if h.count >= 2, h[0] == 0xFF, h[1] == 0xD8 { return .jpeg }
        if h.count >= 8, h.prefix(8).elementsEqual([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        if h.count >= 12, h[0..<4].elementsEqual("RIFF".utf8), h[8..<12].elementsEqual("WEBP".utf8) { return .webp }
        return recognizeHEIF(h)
    }

    /// ISO/IEC 14496-12 §4.3: the first box is `ftyp`: major brand, minor version, compatible brands.
    private static func recognizeHEIF(_ h: [UInt8]) -> ImageFormat? {
        guard h.count >= 16, h[4..<8].elementsEqual("ftyp".utf8) else { return nil }
        let size = Int(h[0]) << 24 | Int(h[1]) << 16 | Int(h[2]) << 8 | Int(h[3])
        guard size >= 16, size % 4 == 0 else { return nil }
        var brands = [String(decoding: h[8..<12], as: UTF8.self)]
        var offset = 16
        while offset + 4 <= min(size, h.count) {
            brands.append(String(decoding: h[offset..<offset + 4], as: UTF8.self))
            offset += 4
        }
        let av1: Set<String> = ["avif", "avis"]
        let hevc: Set<String> = ["heic", "heix", "hevc", "hevx", "heim", "heis"]
        let heifStructural: Set<String> = ["mif1", "msf1"]
        // The major brand decides when it names a codec; otherwise any compatible brand does.
        if av1.contains(brands[0]) { return .avif }
        if hevc.contains(brands[0]) { return .heif }
        if brands.contains(where: av1.contains) { return .avif }
        if brands.contains(where: { hevc.contains($0) || heifStructural.contains($0) }) { return .heif }
        return nil
    }

    /// The media type an original of this format is served with.
    public var contentType: String {
        switch self {
        case .jpeg: return "image/jpeg"
        case .png: return "image/png"
        case .webp: return "image/webp"
        case .heif: return "image/heic"
        case .avif: return "image/avif"
        }
    }

    /// The extension of an original's blob key and file name.
    public var fileExtension: String {
        switch self {
        case .jpeg: return "jpg"
        case .png: return "png"
        case .webp: return "webp"
        case .heif: return "heic"
        case .avif: return "avif"
        }
    }
}
