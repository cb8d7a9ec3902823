/// Hides a HEIF file's alpha auxiliary images from libheif, so that decoding the primary image
/// never decodes them.
///
/// galleryd drops alpha from HEIF originals (the derivatives are the colour image), but libheif
/// 1.15 decodes an alpha image with its primary whenever their `ispe` sizes match, and fails the
/// whole decode when the alpha's coded data is corrupt, though the photo itself is whole. Renaming
/// the alpha type in each alpha `auxC` box (ISO/IEC 23008-12 §6.5.8) to a type libheif does not
/// know makes it a generic auxiliary image, which libheif keeps beside the primary and never
/// decodes, as it does depth maps and Apple's gain maps and portrait mattes. The rename keeps every
/// length, so no box size or `iloc` offset changes.
enum HEIFAlpha {
    /// The `auxC` types libheif 1.15 takes for alpha (HEVC, AVC and MIAF/AVIF).
    static let alphaTypes: [[UInt8]] = [
        "urn:mpeg:hevc:2015:auxid:1", "urn:mpeg:avc:2015:auxid:1", "urn:mpeg:mpegB:cicp:systems:auxiliary:alpha",
    ].map { Array($0.utf8) }

    /// What an alpha type's last byte becomes: the type is then unknown to libheif.
    static let hiddenMark = UInt8(ascii: "~")

    /// `file` with every alpha `auxC` type in `meta/iprp/ipco` renamed, or nil when it has none
    /// (or its boxes cannot be walked: libheif then reports the file as it is).
    static func hidingAlpha(in file: [UInt8]) -> [UInt8]? {
        var patched = file
        var found = false
        for meta in boxes(in: file, 0..<file.count) where meta.type == "meta" && meta.payload.count >= 4 {
            let metaChildren = (meta.payload.lowerBound + 4)..<meta.payload.upperBound  // full box
            for iprp in boxes(in: file, metaChildren) where iprp.type == "iprp" {
                for ipco in boxes(in: file, iprp.payload) where ipco.type == "ipco" {
                    for auxC in boxes(in: file, ipco.payload) where auxC.type == "auxC" && auxC.payload.count > 4 {
                        let urn = (auxC.payload.lowerBound + 4)..<auxC.payload.upperBound
                        let end = file[urn].firstIndex(of: 0) ?? urn.upperBound
                        guard alphaTypes.contains(where: { file[urn.lowerBound..<end].elementsEqual($0) }) else {
                            continue
                        }
                        patched[end - 1] = hiddenMark
                        found = true
                    }
                }
            }
        }
        return found ? patched : nil
    }

    /// The boxes laid one after another in `range` of `file` (ISO/IEC 14496-12 §4.2): each one's
    /// four-character type and payload. Stops at the first box that does not fit.
    static func boxes(in file: [UInt8], _ range: Range<Int>) -> [(type: String, payload: Range<Int>)] {
        var found: [(type: String, payload: Range<Int>)] = []
        var at = range.lowerBound
        while range.upperBound - at >= 8 {
            func read(_ offset: Int, _ count: Int) -> Int {
                file[offset..<offset + count].reduce(0) { $0 << 8 | Int($1) }
            }
            var size = read(at, 4)
            var header = 8
            if size == 1 {
                guard range.upperBound - at >= 16, file[at + 8] & 0x80 == 0 else { break }
                size = read(at + 8, 8)
                header = 16
            } else if size == 0 {
                size = range.upperBound - at
            }
            guard size >= header, size <= range.upperBound - at else { break }
            let type = String(decoding: file[(at + 4)..<(at + 8)], as: UTF8.self)
            found.append((type, (at + header)..<(at + size)))
            at += size
        }
        return found
    }
}
