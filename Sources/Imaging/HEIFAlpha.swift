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
        for meta in ISOBMFFBoxes.boxes(in: file, 0..<file.count) where meta.type == "meta" {
            for iprp in ISOBMFFBoxes.children(ofFull: meta, in: file) where iprp.type == "iprp" {
                for ipco in ISOBMFFBoxes.boxes(in: file, iprp.payload) where ipco.type == "ipco" {
                    for auxC in ISOBMFFBoxes.boxes(in: file, ipco.payload) where auxC.type == "auxC" {
                        guard let urn = auxC.fullPayload, !urn.isEmpty else { continue }
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
}
