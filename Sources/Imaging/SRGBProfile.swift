import Foundation

/// Whether an ICC profile describes plain sRGB, so that a derivative without it shows the same
/// colours: a JPEG with no profile is read as sRGB by browsers and viewers.
///
/// Such a profile is pure bytes on a derivative: the usual one (HP's "sRGB IEC61966-2.1", which
/// PNG and JPEG writers embed by default) is 3,144 bytes, written into the thumbnail and the preview
/// alike. On a 640×427 PNG that was 10–11% of each of vipsthumbnail's files, which strip it
/// (docs/decisions/058-srgb-profile-and-preview-tables.md).
///
/// A matrix/TRC RGB profile counts as sRGB when its three colorants (`rXYZ`, `gXYZ`, `bXYZ`) are
/// sRGB's, adapted to D50, within `colorantTolerance`, and each of its three tone curves is the sRGB
/// curve: a `para` curve with sRGB's parameters, or a `curv` table within `curveTolerance` of it at
/// every entry. Anything else is not: a profile with lookup tables (`A2B0`…, which a colour manager
/// would prefer to the matrix), a gamma-only curve, another gamut, or bytes that do not parse.
enum SRGBProfile {
    /// sRGB's colorants in the profile connection space (D50, Bradford-adapted), as ICC's sRGB
    /// profiles store them: red, green, blue, each X, Y, Z.
    static let colorants: [[Double]] = [
        [0.4361, 0.2225, 0.0139], [0.3851, 0.7169, 0.0971], [0.1431, 0.0606, 0.7141],
    ]
    /// How far a colorant component may be from sRGB's (profiles round them to s15Fixed16 and
    /// differ in the fourth decimal).
    static let colorantTolerance = 0.002
    /// How far a tone curve may be from sRGB's, as a fraction of full scale (half an 8-bit step).
    static let curveTolerance = 0.5 / 255

    /// Whether `profile` is an sRGB profile (see the type's comment).
    static func matches(_ profile: [UInt8]) -> Bool {
        guard profile.count >= 132, text(profile, 16) == "RGB ", text(profile, 20) == "XYZ " else { return false }
        let count = Int(uint32(profile, 128))
        guard count <= 100, 132 + 12 * count <= profile.count else { return false }
        var tags: [String: ArraySlice<UInt8>] = [:]
        for index in 0..<count {
            let entry = 132 + 12 * index
            let (offset, size) = (Int(uint32(profile, entry + 4)), Int(uint32(profile, entry + 8)))
            guard offset >= 0, size >= 0, offset <= profile.count, size <= profile.count - offset else { return false }
            tags[text(profile, entry)] = profile[offset..<offset + size]
        }
        if ["A2B0", "A2B1", "A2B2", "B2A0", "B2A1", "B2A2"].contains(where: { tags[$0] != nil }) { return false }
        for (channel, name) in ["r", "g", "b"].enumerated() {
            guard let xyz = tags[name + "XYZ"].flatMap(colorant),
                zip(xyz, colorants[channel]).allSatisfy({ abs($0 - $1) <= colorantTolerance }),
                let curve = tags[name + "TRC"], isSRGBCurve(Array(curve))
            else { return false }
        }
        return true
    }

    /// sRGB's tone curve: encoded value 0…1 to linear light 0…1.
    static func linear(_ value: Double) -> Double {
        value <= 0.04045 ? value / 12.92 : pow((value + 0.055) / 1.055, 2.4)
    }

    /// The X, Y, Z of an `XYZ ` tag.
    private static func colorant(_ tag: ArraySlice<UInt8>) -> [Double]? {
        let bytes = Array(tag)
        guard bytes.count >= 20, text(bytes, 0) == "XYZ " else { return nil }
        return (0..<3).map { s15Fixed16(bytes, 8 + 4 * $0) }
    }

    /// Whether a `curv` or `para` tag is sRGB's curve.
    private static func isSRGBCurve(_ tag: [UInt8]) -> Bool {
        guard tag.count >= 12 else { return false }
        switch text(tag, 0) {
        case "curv":
            let entries = Int(uint32(tag, 8))
            guard entries >= 2, tag.count >= 12 + 2 * entries else { return false }
            return (0..<entries).allSatisfy { index in
                let stored = Double(UInt16(tag[12 + 2 * index]) << 8 | UInt16(tag[13 + 2 * index])) / 65535
                return abs(stored - linear(Double(index) / Double(entries - 1))) <= curveTolerance
            }
        case "para":
            // Function type 3 (g, a, b, c, d) is sRGB's form; type 4 adds offsets e and f, which must be 0.
            let type = Int(tag[8]) << 8 | Int(tag[9])
            let parameters = type == 3 ? 5 : type == 4 ? 7 : 0
            guard parameters > 0, tag.count >= 12 + 4 * parameters else { return false }
            let values = (0..<parameters).map { s15Fixed16(tag, 12 + 4 * $0) }
            let srgb = [2.4, 1 / 1.055, 0.055 / 1.055, 1 / 12.92, 0.04045, 0, 0]
            return zip(values, srgb).allSatisfy { abs($0 - $1) <= 0.001 }
        default:
            return false
        }
    }

    private static func text(_ bytes: some RandomAccessCollection<UInt8>, _ at: Int) -> String {
        let start = bytes.index(bytes.startIndex, offsetBy: at)
        return String(decoding: bytes[start..<bytes.index(start, offsetBy: 4)], as: UTF8.self)
    }

    private static func uint32(_ bytes: [UInt8], _ at: Int) -> UInt32 {
        (0..<4).reduce(0) { $0 << 8 | UInt32(bytes[at + $1]) }
    }

    private static func s15Fixed16(_ bytes: [UInt8], _ at: Int) -> Double {
        Double(Int32(bitPattern: uint32(bytes, at))) / 65536
    }
}
