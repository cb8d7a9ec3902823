import Foundation
import GalleryTestSupport
import Testing

@testable import Imaging

/// Which ICC profiles count as plain sRGB, and that PNG, WebP, HEIC and AVIF derivatives leave those
/// out while JPEG derivatives keep them (decisions 058, 067).
@Suite struct SRGBProfileTests {
    /// A tone curve as a profile stores it.
    enum Curve {
        /// A `curv` table of sRGB's curve with this many entries, `offset` added to the middle one.
        case table(Int, offset: Double = 0)
        /// A `curv` with one entry: a pure gamma.
        case gamma(Double)
        /// A `para` curve of function type 3 with these parameters.
        case parametric([Double])
    }

    static let srgbParameters = [2.4, 1 / 1.055, 0.055 / 1.055, 1 / 12.92, 0.04045]
    static let displayP3 = [[0.5151, 0.2412, -0.0011], [0.2920, 0.6922, 0.0419], [0.1571, 0.0666, 0.7841]]

    /// A matrix/TRC RGB display profile with these colorants and one curve for all three channels,
    /// plus `extraTags` (signature and data).
    static func profile(
        colorants: [[Double]] = SRGBProfile.colorants, curve: Curve = .table(1024), extraTags: [(String, [UInt8])] = []
    ) -> [UInt8] {
        func be32(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * $0)) } }
        func fixed(_ value: Double) -> [UInt8] { be32(UInt32(bitPattern: Int32((value * 65536).rounded()))) }
        let curveData: [UInt8]
        switch curve {
        case .table(let entries, let offset):
            curveData =
                Array("curv".utf8) + [0, 0, 0, 0] + be32(UInt32(entries))
                + (0..<entries).flatMap { index -> [UInt8] in
                    let value =
                        SRGBProfile.linear(Double(index) / Double(entries - 1))
                        + (index == entries / 2 ? offset : 0)
                    let stored = UInt16((min(max(value, 0), 1) * 65535).rounded())
                    return [UInt8(stored >> 8), UInt8(stored & 0xFF)]
                }
        case .gamma(let gamma):
            let fixed8 = Int((gamma * 256).rounded())
            curveData = Array("curv".utf8) + [0, 0, 0, 0] + be32(1) + [UInt8(fixed8 >> 8), UInt8(fixed8 & 0xFF)]
        case .parametric(let parameters):
            curveData = Array("para".utf8) + [0, 0, 0, 0, 0, 3, 0, 0] + parameters.flatMap(fixed)
        }
        var tags: [(String, [UInt8])] = zip(["rXYZ", "gXYZ", "bXYZ"], colorants).map {
            ($0, Array("XYZ ".utf8) + [0, 0, 0, 0] + $1.flatMap(fixed))
        }
        tags += ["rTRC", "gTRC", "bTRC"].map { ($0, curveData) } + extraTags
        var header = [UInt8](repeating: 0, count: 128)
        header.replaceSubrange(12..<24, with: Array("mntrRGB XYZ ".utf8))
        header.replaceSubrange(36..<40, with: Array("acsp".utf8))
        var table = be32(UInt32(tags.count))
        var data: [UInt8] = []
        var offset = 128 + 4 + 12 * tags.count
        for (signature, bytes) in tags {
            table += Array(signature.utf8) + be32(UInt32(offset)) + be32(UInt32(bytes.count))
            let padded = bytes + [UInt8](repeating: 0, count: (4 - bytes.count % 4) % 4)
            data += padded
            offset += padded.count
        }
        var profile = header + table + data
        profile.replaceSubrange(0..<4, with: be32(UInt32(profile.count)))
        return profile
    }

    @Test func matches_SRGBsTableAndParametricCurves() {
        #expect(SRGBProfile.matches(Self.profile(curve: .table(1024))))
        #expect(SRGBProfile.matches(Self.profile(curve: .table(26))))
        #expect(SRGBProfile.matches(Self.profile(curve: .parametric(Self.srgbParameters))))
        let rounded = SRGBProfile.colorants.map { $0.map { $0 + 0.0004 } }
        #expect(SRGBProfile.matches(Self.profile(colorants: rounded)))
    }

    /// Another gamut, another curve, lookup tables or bytes that do not parse are not sRGB.
    @Test func rejects_EverythingElse() {
        #expect(!SRGBProfile.matches(Self.profile(colorants: Self.displayP3)))
        #expect(!SRGBProfile.matches(Self.profile(curve: .gamma(2.2))))
        #expect(!SRGBProfile.matches(Self.profile(curve: .table(1024, offset: 2.0 / 255))))
        var gamma22 = Self.srgbParameters
        gamma22[0] = 2.2
        #expect(!SRGBProfile.matches(Self.profile(curve: .parametric(gamma22))))
        #expect(!SRGBProfile.matches(Self.profile(extraTags: [("A2B0", [UInt8](repeating: 7, count: 40))])))
        #expect(!SRGBProfile.matches(TestImages.iccProfile(size: 700)))
        let whole = Self.profile()
        #expect(!SRGBProfile.matches(Array(whole.prefix(300))))
        var farTag = whole
        farTag.replaceSubrange(136..<140, with: [0x7F, 0xFF, 0xFF, 0xF0])
        #expect(!SRGBProfile.matches(farTag))
        var manyTags = whole
        manyTags.replaceSubrange(128..<132, with: [0xFF, 0xFF, 0xFF, 0xFF])
        #expect(!SRGBProfile.matches(manyTags))
        var gray = whole
        gray.replaceSubrange(16..<20, with: Array("GRAY".utf8))
        #expect(!SRGBProfile.matches(gray))
    }

    /// The APP2 ICC chunks of a JPEG, joined.
    static func embeddedProfile(_ jpeg: [UInt8]) -> [UInt8]? {
        let chunks = TestImages.segments(jpeg).filter { $0.code == 0xE2 }
        return chunks.isEmpty ? nil : chunks.flatMap { $0.payload.dropFirst(14) }
    }

    /// A PNG with an sRGB profile (or a Display P3 one) of 96×64 quadrants.
    static func png(profile: [UInt8]) -> [UInt8] {
        PNGWriter(width: 96, height: 64, colorType: .rgb, iccProfile: profile) { x, y in
            [x < 48 ? 230 : 20, y < 32 ? 200 : 40, 90]
        }.encode()
    }

    /// PNG and WebP derivatives leave an sRGB profile out and keep any other; without the rule
    /// (or with it on the wrong formats) these fail.
    @Test(arguments: [ImageFormat.png, .webp])
    func pngAndWebP_LeaveOutAnSRGBProfile(format: ImageFormat) throws {
        for (profile, kept) in [(Self.profile(), false), (Self.profile(colorants: Self.displayP3), true)] {
            let png = Self.png(profile: profile)
            let bytes = format == .webp ? try FixtureTools.webp(png, options: ["-q", "95", "-metadata", "icc"]) : png
            #expect(try ImageProbe.probe(bytes: bytes).iccProfile == profile)
            let result = try ImagePipeline.process(bytes: bytes, spec: SourceEncoderSettingsTests.spec)
            #expect(result.info.format == format)
            for jpeg in [result.preview.jpeg, result.thumbnail.jpeg] {
                let carried = Self.embeddedProfile(jpeg)
                #expect((carried != nil) == kept, "\(format): the profile carried is \(carried?.count ?? 0) bytes")
                if kept { #expect(carried == profile) }
            }
        }
    }

    /// JPEG derivatives keep even an sRGB profile: their bytes do not change (decision 058).
    @Test func jpeg_KeepsAnSRGBProfile() throws {
        let profile = Self.profile()
        let jpeg = try TestImages.progressive(TestImages.noise(width: 96, height: 64), quality: 95, icc: profile)
        let result = try ImagePipeline.process(bytes: jpeg, spec: SourceEncoderSettingsTests.spec)
        for jpeg in [result.preview.jpeg, result.thumbnail.jpeg] {
            let carried = Self.embeddedProfile(jpeg)
            #expect(carried?.count == profile.count)
            #expect(carried == profile)
        }
    }

    /// A HEIC (or AVIF: the same row) carrying a plain sRGB profile gives derivatives without it, one
    /// carrying a Display P3 profile keeps it (decision 067); without the rule for HEIF these fail.
    @Test func heic_LeavesOutAnSRGBProfile() throws {
        let tile = HEIFAssembler.Tile(
            heifEncOutput: try FixtureTools.heic(HEIFTests.solidPNG((200, 100, 50)), options: ["-q", "90"]), width: 64,
            height: 64)
        for (profile, kept) in [(Self.profile(), false), (Self.profile(colorants: Self.displayP3), true)] {
            let heic = HEIFAssembler.assemble(tiles: [tile], grid: false, colour: .icc(profile))
            #expect(try ImageProbe.probe(bytes: heic).iccProfile == profile)
            let result = try ImagePipeline.process(bytes: heic, spec: SourceEncoderSettingsTests.spec)
            #expect(result.info.format == .heif)
            for jpeg in [result.preview.jpeg, result.thumbnail.jpeg] {
                let carried = Self.embeddedProfile(jpeg)
                #expect((carried != nil) == kept, "the profile carried is \(carried?.count ?? 0) bytes")
                if kept { #expect(carried == profile) }
            }
        }
        #expect(SourceEncoderSettings.forSource(.avif).omitsSRGBProfile)
        #expect(!SourceEncoderSettings.forSource(.jpeg).omitsSRGBProfile)
    }
}
