import CHeif
import Foundation
import GalleryTestSupport
import Testing

@testable import Imaging

/// Issue #28: "files with several images (the primary one), depth/alpha auxiliary images
/// ignored", "the thumbnail item (never use it as the derivative)". Real phones' HEICs carry
/// depth maps (`urn:mpeg:hevc:2015:auxid:2`), Apple's gain maps and portrait mattes (types libheif
/// 1.15 does not know) and sometimes alpha. Each image beside the primary here has its own colour
/// (magenta) and size, so a derivative made from it, or sized by it, fails the test; each file is
/// also checked to hold what libheif should see in it.
@Suite struct HEIFAuxiliaryTests {
    typealias RGB = (UInt8, UInt8, UInt8)
    static let spec = PNGTests.spec
    static let magenta: RGB = (200, 40, 200)

    /// The primary: 96×64 in four coloured quadrants.
    static func primary() throws -> HEIFAssembler.Tile {
        HEIFAssembler.Tile(
            heifEncOutput: try FixtureTools.heic(PNGTests.quadrantsPNG(), options: ["-q", "90"]), width: 96, height: 64)
    }

    /// A magenta image of its own size.
    static func other(width: Int, height: Int) throws -> HEIFAssembler.Tile {
        HEIFAssembler.Tile(
            heifEncOutput: try FixtureTools.heic(
                HEIFTests.solidPNG(magenta, width: width, height: height), options: ["-q", "90"]),
            width: width, height: height)
    }

    /// What libheif sees beside `file`'s primary: its auxiliary images' types, whether it has a
    /// depth image and an alpha image, its top-level images and thumbnails.
    struct Seen: Equatable {
        var auxiliaryTypes: [String]
        var depth: Bool
        var alpha: Bool
        var topLevelImages: Int
        var thumbnails: Int
    }

    static func seen(_ file: [UInt8]) throws -> Seen {
        let context = try #require(heif_context_alloc())
        defer { heif_context_free(context) }
        let read = file.withUnsafeBytes { heif_context_read_from_memory(context, $0.baseAddress, file.count, nil) }
        try #require(read.code == heif_error_Ok, "\(String(cString: read.message))")
        var handle: OpaquePointer?
        try #require(heif_context_get_primary_image_handle(context, &handle).code == heif_error_Ok)
        defer { heif_image_handle_release(handle) }
        let count = heif_image_handle_get_number_of_auxiliary_images(handle, 0)
        var ids = [heif_item_id](repeating: 0, count: Int(count))
        _ = heif_image_handle_get_list_of_auxiliary_image_IDs(handle, 0, &ids, count)
        let types = try ids.map { id in
            var auxiliary: OpaquePointer?
            try #require(heif_image_handle_get_auxiliary_image_handle(handle, id, &auxiliary).code == heif_error_Ok)
            defer { heif_image_handle_release(auxiliary) }
            var type: UnsafePointer<CChar>?
            try #require(heif_image_handle_get_auxiliary_type(auxiliary, &type).code == heif_error_Ok)
            defer { heif_image_handle_free_auxiliary_types(auxiliary, &type) }
            return String(cString: try #require(type))
        }
        return Seen(
            auxiliaryTypes: types, depth: heif_image_handle_has_depth_image(handle) != 0,
            alpha: heif_image_handle_has_alpha_channel(handle) != 0,
            topLevelImages: Int(heif_context_get_number_of_top_level_images(context)),
            thumbnails: Int(heif_image_handle_get_number_of_thumbnails(handle)))
    }

    /// The primary image's luma bit depth, as libheif reads it from the file.
    static func lumaBits(_ file: [UInt8]) throws -> Int {
        let context = try #require(heif_context_alloc())
        defer { heif_context_free(context) }
        let read = file.withUnsafeBytes { heif_context_read_from_memory(context, $0.baseAddress, file.count, nil) }
        try #require(read.code == heif_error_Ok)
        var handle: OpaquePointer?
        try #require(heif_context_get_primary_image_handle(context, &handle).code == heif_error_Ok)
        defer { heif_image_handle_release(handle) }
        return Int(heif_image_handle_get_luma_bits_per_pixel(handle))
    }

    /// The derivatives and sizes are the primary's, from memory and from a file.
    static func expectThePrimary(
        _ file: [UInt8], limits: ImageLimits = ImageLimits(), sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let fromFile = try TestImages.temporaryFile(file, name: "aux.heic")
        for result in [
            try ImagePipeline.process(bytes: file, spec: spec, limits: limits),
            try ImagePipeline.process(fileAt: fromFile, spec: spec, limits: limits),
        ] {
            #expect((result.info.displayWidth, result.info.displayHeight) == (96, 64), sourceLocation: sourceLocation)
            try ImagePipelineTests.expectUprightQuadrants(
                result.preview.jpeg, width: 64, height: 43, sourceLocation: sourceLocation)
            try ImagePipelineTests.expectUprightQuadrants(
                result.thumbnail.jpeg, width: 48, height: 32, sourceLocation: sourceLocation)
        }
        let info = try ImageProbe.probe(bytes: file, limits: limits)
        #expect((info.width, info.height) == (96, 64), sourceLocation: sourceLocation)
    }

    /// `heif-enc` stores a PNG's alpha as an auxiliary image of type `urn:mpeg:hevc:2015:auxid:1`;
    /// the same-length `…:auxid:2` makes it a depth map, which libheif 1.15 reports as one (1.15's
    /// encoder API cannot add a depth image itself). Its samples are the alpha's greys.
    @Test func process_IgnoresADepthImage_MadeFromHeifEncsAlpha() throws {
        let colors = [TestImages.red, TestImages.green, TestImages.blue, TestImages.yellow]
        let translucent = PNGWriter(width: 96, height: 64, colorType: .rgba) { x, y in
            let c = colors[(y < 32 ? 0 : 2) + (x < 48 ? 0 : 1)]
            return [Int(c.0), Int(c.1), Int(c.2), x < 48 ? 40 : 250]
        }.encode()
        let withAlpha = try FixtureTools.heic(translucent, options: ["-q", "90"])
        let alphaType = Array(HEIFAssembler.alphaType.utf8)
        let at = try #require(
            (0...(withAlpha.count - alphaType.count)).first {
                withAlpha[$0..<$0 + alphaType.count].elementsEqual(alphaType)
            })
        var depth = withAlpha
        depth.replaceSubrange(at..<at + alphaType.count, with: Array(HEIFAssembler.depthType.utf8))
        #expect(
            try Self.seen(depth)
                == Seen(
                    auxiliaryTypes: [HEIFAssembler.depthType], depth: true, alpha: false, topLevelImages: 1,
                    thumbnails: 0))
        try Self.expectThePrimary(depth)
        try Self.expectThePrimary(withAlpha)
    }

    /// Each kind of auxiliary image phones write, larger than the primary and of another colour:
    /// the derivatives and sizes are the primary's. An alpha image of another size than the
    /// primary is a plain auxiliary image to libheif.
    @Test(arguments: [
        HEIFAssembler.depthType, "urn:mpeg:mpegB:cicp:systems:auxiliary:depth", HEIFAssembler.appleGainMapType,
        HEIFAssembler.applePortraitMatteType, HEIFAssembler.alphaType,
    ])
    func process_UsesThePrimary_NotALargerAuxiliaryImage(type: String) throws {
        let file = HEIFAssembler.assemble(
            tiles: [try Self.primary()], grid: false,
            attached: [.init(try Self.other(width: 160, height: 120), .auxiliary(type))])
        let seen = try Self.seen(file)
        #expect(seen.auxiliaryTypes == [type] && seen.topLevelImages == 1)
        #expect(seen.depth == (type == HEIFAssembler.depthType || type.hasSuffix(":depth")) && !seen.alpha, "\(seen)")
        try Self.expectThePrimary(file)
    }

    /// An auxiliary image over `max_pixels` beside a small primary neither refuses the file nor is
    /// decoded: a real 160×120 gain map under a 10,000-pixel limit (the primary is 6,144), and a
    /// depth map whose `ispe` declares 12000×10000 (120 MP, over the default 100 MP) while its
    /// coded data is zeros, which any decode of it would fail on.
    @Test func process_AcceptsAnAuxiliaryImageOverMaxPixels_WithoutDecodingIt() throws {
        let small = ImageLimits(maxPixels: 10_000)
        let gainMap = HEIFAssembler.assemble(
            tiles: [try Self.primary()], grid: false,
            attached: [.init(try Self.other(width: 160, height: 120), .auxiliary(HEIFAssembler.appleGainMapType))])
        try Self.expectThePrimary(gainMap, limits: small)
        let huge = HEIFAssembler.assemble(
            tiles: [try Self.primary()], grid: false,
            attached: [
                .init(
                    try Self.other(width: 64, height: 64), .auxiliary(HEIFAssembler.depthType),
                    declaredSize: (12000, 10000), corrupt: true)
            ])
        #expect(try Self.seen(huge).depth)
        try Self.expectThePrimary(huge)
    }

    /// A corrupt auxiliary image (its coded data zeros, its boxes whole) leaves the primary
    /// usable, an alpha image of the primary's size too: libheif 1.15 decodes such an alpha image
    /// with the primary and failed the whole decode until galleryd hid it (`HEIFAlpha`).
    @Test(arguments: [HEIFAssembler.depthType, HEIFAssembler.appleGainMapType, HEIFAssembler.alphaType])
    func process_UsesThePrimary_WhenAnAuxiliaryImageIsCorrupt(type: String) throws {
        let file = HEIFAssembler.assemble(
            tiles: [try Self.primary()], grid: false,
            attached: [.init(try Self.other(width: 96, height: 64), .auxiliary(type), corrupt: true)])
        #expect(try Self.seen(file).alpha == (type == HEIFAssembler.alphaType))
        try Self.expectThePrimary(file)
    }

    /// The thumbnail item, larger here than a real one and of its own colour, and another
    /// top-level image listed first and larger than the primary, are never used: only `pitm`'s
    /// image is.
    @Test func process_UsesThePitmImage_NotTheThumbnailNorTheFirstOrLargestImage() throws {
        let file = HEIFAssembler.assemble(
            tiles: [try Self.primary()], grid: false,
            attached: [
                .init(try Self.other(width: 160, height: 120), .otherImage),
                .init(try Self.other(width: 80, height: 64), .thumbnail),
            ])
        let seen = try Self.seen(file)
        #expect(seen.topLevelImages == 2 && seen.thumbnails == 1)
        try Self.expectThePrimary(file)
    }

    /// What libheif 1.15 cannot read at all is refused from the header, with its reason (130 at
    /// upload): an auxiliary image whose `auxC` property is missing, or whose `ispe` is over
    /// libheif's 32768 a side (it checks every item's).
    @Test func probe_RefusesAnAuxiliaryImageWithoutItsType_OrOverLibheifsLimit() throws {
        let depth = HEIFAssembler.assemble(
            tiles: [try Self.primary()], grid: false,
            attached: [.init(try Self.other(width: 96, height: 64), .auxiliary(HEIFAssembler.depthType))])
        let type = Array("auxC".utf8)
        let at = try #require((0..<depth.count - 4).first { depth[$0..<$0 + 4].elementsEqual(type) })
        var untyped = depth
        untyped[at + 3] = UInt8(ascii: "X")
        #expect {
            try ImageProbe.probe(bytes: untyped)
        } throws: { error in
            guard case ImageError.corrupt(let message) = error else { return false }
            return message.contains("No auxC property")
        }
        let huge = HEIFAssembler.assemble(
            tiles: [try Self.primary()], grid: false,
            attached: [
                .init(
                    try Self.other(width: 64, height: 64), .auxiliary(HEIFAssembler.appleGainMapType),
                    declaredSize: (40000, 64))
            ])
        #expect {
            try ImageProbe.probe(bytes: huge)
        } throws: { error in
            guard case ImageError.decodeFailed(let message) = error else { return false }
            return message.contains("exceeds the maximum image size")
        }
    }

    /// The alpha types are renamed in place, one byte each, and only in `auxC` boxes: libheif
    /// then sees a plain auxiliary image; a file without alpha, or whose boxes do not fit, is
    /// left alone.
    @Test func hidingAlpha_RenamesOnlyAlphaTypes_InPlace() throws {
        let alpha = HEIFAssembler.assemble(
            tiles: [try Self.primary()], grid: false,
            attached: [.init(try Self.other(width: 96, height: 64), .auxiliary(HEIFAssembler.alphaType))])
        #expect(try Self.seen(alpha).alpha)
        let hidden = try #require(HEIFAlpha.hidingAlpha(in: alpha))
        #expect(hidden.count == alpha.count)
        #expect(zip(hidden, alpha).filter { $0 != $1 }.count == 1)
        let seen = try Self.seen(hidden)
        #expect(!seen.alpha && seen.auxiliaryTypes == ["urn:mpeg:hevc:2015:auxid:~"])

        let depth = HEIFAssembler.assemble(
            tiles: [try Self.primary()], grid: false,
            attached: [.init(try Self.other(width: 96, height: 64), .auxiliary(HEIFAssembler.depthType))])
        #expect(HEIFAlpha.hidingAlpha(in: depth) == nil)
        #expect(HEIFAlpha.hidingAlpha(in: Array(alpha.prefix(200))) == nil)
        #expect(HEIFAlpha.hidingAlpha(in: [0, 0, 0, 1] + Array(alpha.dropFirst(4))) == nil)
    }
}
