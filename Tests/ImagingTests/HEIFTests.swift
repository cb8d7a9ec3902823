import Foundation
import GalleryTestSupport
import Testing

@testable import Imaging

@Suite struct HEIFTests {
    typealias RGB = (UInt8, UInt8, UInt8)
    static let spec = PNGTests.spec

    static func solidPNG(_ c: RGB, width: Int = 64, height: Int = 64) -> [UInt8] {
        PNGWriter(width: width, height: height, colorType: .rgb) { _, _ in [Int(c.0), Int(c.1), Int(c.2)] }.encode()
    }

    /// The quadrant colours (TL, TR, BL, BR) of an output JPEG.
    static func quadrants(_ jpeg: [UInt8]) throws -> [(r: UInt8, g: UInt8, b: UInt8)] {
        let image = try TestImages.decode(jpeg)
        let (w, h) = (image.width, image.height)
        return [(w / 4, h / 4), (3 * w / 4, h / 4), (w / 4, 3 * h / 4), (3 * w / 4, 3 * h / 4)].map {
            image.rgb(x: $0.0, y: $0.1)
        }
    }

    static func expectQuadrants(_ jpeg: [UInt8], _ expected: [RGB], sourceLocation: SourceLocation = #_sourceLocation)
        throws
    {
        for (pixel, color) in zip(try quadrants(jpeg), expected) {
            #expect(ImagePipelineTests.close(pixel, color), "\(pixel) is not \(color)", sourceLocation: sourceLocation)
        }
    }

    @Test(arguments: [false, true])
    func process_DecodesHEICAndAVIF(avif: Bool) throws {
        let file = try FixtureTools.heic(PNGTests.quadrantsPNG(), options: ["-q", "90"], avif: avif)
        let result = try ImagePipeline.process(bytes: file, spec: Self.spec)
        #expect(result.info.format == (avif ? .avif : .heif))
        #expect(result.info.format.contentType == (avif ? "image/avif" : "image/heic"))
        #expect((result.info.displayWidth, result.info.displayHeight) == (96, 64))
        try ImagePipelineTests.expectUprightQuadrants(result.preview.jpeg, width: 64, height: 43)
        try ImagePipelineTests.expectUprightQuadrants(result.thumbnail.jpeg, width: 48, height: 32)
        // From a file as well as from memory.
        let fromFile = try ImagePipeline.process(fileAt: TestImages.temporaryFile(file, name: "x.jpg"), spec: Self.spec)
        #expect(fromFile.info == result.info)
    }

    @Test func process_AssemblesAGridTiledPrimary() throws {
        let (r, g, b, y) = (TestImages.red, TestImages.green, TestImages.blue, TestImages.yellow)
        let tiles = try [r, g, b, y].map { color in
            HEIFAssembler.Tile(
                heifEncOutput: try FixtureTools.heic(Self.solidPNG(color), options: ["-q", "90"]), width: 64, height: 64
            )
        }
        // 2×2 tiles of 64 cropped to 120×100 by the grid's output size, as phones crop 512-pixel tiles.
        let heic = HEIFAssembler.assemble(tiles: tiles, columns: 2, grid: true, width: 120, height: 100)
        let result = try ImagePipeline.process(bytes: heic, spec: Self.spec)
        #expect((result.info.width, result.info.height) == (120, 100))
        #expect((result.preview.width, result.preview.height) == (64, 53))
        let image = try TestImages.decode(result.preview.jpeg)
        // Tile borders fall at 64 of 120 and 64 of 100 source pixels.
        for (x, yy, color) in [(10, 10, r), (50, 10, g), (10, 45, b), (50, 45, y)] {
            #expect(ImagePipelineTests.close(image.rgb(x: x, y: yy), color), "(\(x), \(yy))")
        }
    }

    @Test func process_AppliesClapIrotAndImir() throws {
        let (r, g, b, y) = (TestImages.red, TestImages.green, TestImages.blue, TestImages.yellow)
        let tile = HEIFAssembler.Tile(
            heifEncOutput: try FixtureTools.heic(PNGTests.quadrantsPNG(), options: ["-q", "90"]), width: 96, height: 64)
        let cases: [([HEIFAssembler.Transform], (Int, Int), [RGB])] = [
            ([], (96, 64), [r, g, b, y]),
            ([.irot(quarters: 1)], (64, 96), [g, y, r, b]),  // 90° anticlockwise
            ([.irot(quarters: 3)], (64, 96), [b, r, y, g]),
            ([.imir(axis: 0)], (96, 64), [b, y, r, g]),  // top and bottom swap, as libheif reads it
            ([.imir(axis: 1)], (96, 64), [g, r, y, b]),
            ([.clap(width: 80, height: 48)], (80, 48), [r, g, b, y]),
        ]
        for (transforms, size, expected) in cases {
            let heic = HEIFAssembler.assemble(tiles: [tile], grid: false, transforms: transforms)
            let result = try ImagePipeline.process(bytes: heic, spec: Self.spec)
            #expect((result.info.displayWidth, result.info.displayHeight) == size, "\(transforms)")
            #expect(result.info.orientation == 1)
            try Self.expectQuadrants(result.preview.jpeg, expected)
        }
        // A transformed grid: rotated like a portrait photo.
        let tiles = try [r, g, b, y].map { color in
            HEIFAssembler.Tile(
                heifEncOutput: try FixtureTools.heic(Self.solidPNG(color), options: ["-q", "90"]), width: 64, height: 64
            )
        }
        let portrait = HEIFAssembler.assemble(tiles: tiles, columns: 2, grid: true, transforms: [.irot(quarters: 1)])
        let result = try ImagePipeline.process(bytes: portrait, spec: Self.spec)
        try Self.expectQuadrants(result.preview.jpeg, [g, y, r, b])
    }

    /// Real iPhone files are not available offline, so the mirror axis is checked against libheif's
    /// own `heif-convert` on generated files: whatever libheif 1.15 makes of `imir` (and of `imir`
    /// after `irot`), galleryd's derivatives show the same, not a second or opposite flip.
    @Test func process_MirrorsAsHeifConvertDoes() throws {
        let tile = HEIFAssembler.Tile(
            heifEncOutput: try FixtureTools.heic(PNGTests.quadrantsPNG(), options: ["-q", "90"]), width: 96, height: 64)
        let cases: [[HEIFAssembler.Transform]] = [
            [.imir(axis: 0)], [.imir(axis: 1)], [.irot(quarters: 1), .imir(axis: 0)],
            [.irot(quarters: 3), .imir(axis: 1)],
        ]
        for transforms in cases {
            let heic = HEIFAssembler.assemble(tiles: [tile], grid: false, transforms: transforms)
            let converted = try FixtureTools.run(
                "heif-convert", ["{0}", "{out}"], inputs: [("in.heic", heic)], output: "out.png")
            let reference = try PNGDecoder.decode(bytes: converted, limits: ImageLimits())
            let result = try ImagePipeline.process(bytes: heic, spec: Self.spec)
            #expect((result.info.displayWidth, result.info.displayHeight) == (reference.width, reference.height))
            let bpp = reference.layout.bytesPerPixel
            let expected: [RGB] = [(1, 1), (3, 1), (1, 3), (3, 3)].map { qx, qy in
                let p =
                    reference.pixels + (reference.height * qy / 4) * reference.stride + (reference.width * qx / 4) * bpp
                return (p[0], p[1], p[2])
            }
            try Self.expectQuadrants(result.preview.jpeg, expected)
        }
    }

    @Test func probe_ReadsEXIFButOrientationThereIsInformational() throws {
        let jpeg = TestImages.inserting(
            TestImages.exifSegment(orientation: 6, littleEndian: false, date: "2024:05:06 07:08:09"),
            into: try TestImages.baseline(
                TestImages.quadrants(
                    width: 96, height: 64, TestImages.red, TestImages.green, TestImages.blue, TestImages.yellow)))
        let heic = try FixtureTools.heic(jpeg, inputName: "in.jpg", options: ["-q", "90"])
        let result = try ImagePipeline.process(bytes: heic, spec: Self.spec)
        #expect(result.info.takenAt?.timeIntervalSince1970 == 1_714_979_289)
        #expect(result.info.orientation == 1)
        #expect((result.info.displayWidth, result.info.displayHeight) == (96, 64))
        try ImagePipelineTests.expectUprightQuadrants(result.preview.jpeg, width: 64, height: 43)
    }

    @Test func probe_ReadsTheCameraFromTheExifItem() throws {
        let jpeg = TestImages.inserting(
            TestImages.exifSegment(
                orientation: 1, littleEndian: true, make: Array("Apple".utf8), model: Array("iPhone 15 Pro".utf8)),
            into: try TestImages.baseline(TestImages.noise(width: 64, height: 48)))
        let heic = try FixtureTools.heic(jpeg, inputName: "in.jpg", options: ["-q", "90"])
        let info = try ImageProbe.probe(bytes: heic)
        #expect(info.format == .heif)
        #expect(info.cameraMake == "Apple" && info.cameraModel == "iPhone 15 Pro")
        let plain = try FixtureTools.heic(
            try TestImages.baseline(TestImages.noise(width: 64, height: 48)), inputName: "in.jpg")
        #expect(try ImageProbe.probe(bytes: plain).cameraMake == nil)
    }

    @Test func process_ConvertsDisplayP3ToSRGB() throws {
        // nclx primaries 12 (Display P3): (200, 100, 50) in P3 is about (216, 92, 30) in sRGB; 9
        // (BT.2020, a 10-bit HDR phone photo's primaries) about (241, 76, 29).
        let tile = HEIFAssembler.Tile(
            heifEncOutput: try FixtureTools.heic(
                Self.solidPNG((200, 100, 50)), options: ["-q", "98", "-p", "chroma=444"]),
            width: 64, height: 64)
        let cases: [(primaries: Int, expected: RGB)] = [(12, (216, 92, 30)), (9, (241, 76, 29)), (1, (200, 100, 50))]
        for (primaries, expected) in cases {
            let file = HEIFAssembler.assemble(tiles: [tile], grid: false, colour: .nclx(primaries: primaries))
            let color = try PNGTests.meanColor(ImagePipeline.process(bytes: file, spec: Self.spec).preview.jpeg)
            #expect(ImagePipelineTests.close(color, expected, tolerance: 6), "primaries \(primaries): \(color)")
        }
    }

    @Test func process_CarriesTheICCProfile() throws {
        let profile = TestImages.iccProfile(size: 700)
        let tile = HEIFAssembler.Tile(
            heifEncOutput: try FixtureTools.heic(Self.solidPNG((200, 100, 50)), options: ["-q", "90"]), width: 64,
            height: 64)
        let heic = HEIFAssembler.assemble(tiles: [tile], grid: false, colour: .icc(profile))
        let result = try ImagePipeline.process(bytes: heic, spec: Self.spec)
        #expect(result.info.iccProfile == profile)
        let chunks = TestImages.segments(result.preview.jpeg).filter { $0.code == 0xE2 }
        #expect(chunks.count == 1 && Array(chunks[0].payload.dropFirst(14)) == profile)
    }

    @Test func process_Reduces10BitImages() throws {
        let heic = try FixtureTools.heic(PNGTests.quadrantsPNG(bitDepth: 16), options: ["-q", "90", "-b", "10"])
        #expect(try HEIFAuxiliaryTests.lumaBits(heic) == 10, "the fixture is a 10-bit HEVC image")
        let result = try ImagePipeline.process(bytes: heic, spec: Self.spec)
        try ImagePipelineTests.expectUprightQuadrants(result.preview.jpeg, width: 64, height: 43)
    }

    @Test func process_UsesThePrimaryImageOnly() throws {
        // A tiny thumbnail item, a second top-level image and an alpha plane, all ignored.
        let withThumbnail = try FixtureTools.heic(PNGTests.quadrantsPNG(), options: ["-q", "90", "-t", "16"])
        let thumbnailed = try ImagePipeline.process(bytes: withThumbnail, spec: Self.spec)
        #expect((thumbnailed.info.width, thumbnailed.info.height) == (96, 64))
        try ImagePipelineTests.expectUprightQuadrants(thumbnailed.preview.jpeg, width: 64, height: 43)

        let two = try FixtureTools.run(
            "heif-enc", ["-q", "90", "-o", "{out}", "{0}", "{1}"],
            inputs: [
                ("a.png", PNGTests.quadrantsPNG()), ("b.png", Self.solidPNG(TestImages.blue, width: 32, height: 32)),
            ],
            output: "out.heic")
        let first = try ImagePipeline.process(bytes: two, spec: Self.spec)
        #expect((first.info.width, first.info.height) == (96, 64))
        try ImagePipelineTests.expectUprightQuadrants(first.preview.jpeg, width: 64, height: 43)

        let translucent = PNGWriter(width: 40, height: 30, colorType: .rgba) { _, _ in [200, 100, 50, 10] }.encode()
        let alpha = try FixtureTools.heic(translucent, options: ["-q", "95"])
        let color = try PNGTests.meanColor(ImagePipeline.process(bytes: alpha, spec: Self.spec).preview.jpeg)
        #expect(ImagePipelineTests.close(color, (200, 100, 50), tolerance: 8), "\(color)")
    }

    @Test func probe_RefusesOversizedImagesBeforeDecoding() throws {
        let tile = HEIFAssembler.Tile(
            heifEncOutput: try FixtureTools.heic(Self.solidPNG(TestImages.red), options: ["-q", "50"]), width: 64,
            height: 64)
        // One 64×64 tile stretched to a declared 60000×60000 grid.
        let bomb = HEIFAssembler.assemble(tiles: [tile], grid: true, width: 60000, height: 60000)
        #expect(throws: ImageError.self) { try ImageProbe.probe(bytes: bomb) }
        #expect(throws: ImageError.self) { try ImagePipeline.process(bytes: bomb) }
        let small = HEIFAssembler.assemble(tiles: [tile], grid: false)
        #expect(throws: ImageError.tooManyPixels(width: 64, height: 64, limit: 1000)) {
            try ImageProbe.probe(bytes: small, limits: ImageLimits(maxPixels: 1000))
        }
    }

    /// A grid inside libheif's own size limits (32768 a side) but over `max_pixels`, as a 120 MP
    /// bomb made of one tiny tile: refused by galleryd's check, from the header, with the grid's
    /// size; and a coded (`ispe`) size over the limit is refused even when `clap` crops what is
    /// displayed to a few pixels, since the decoder allocates the coded size.
    @Test func probe_RefusesAGridOverMaxPixels_AndACodedSizeOverIt_BeforeDecoding() throws {
        let tile = HEIFAssembler.Tile(
            heifEncOutput: try FixtureTools.heic(Self.solidPNG(TestImages.red), options: ["-q", "50"]), width: 64,
            height: 64)
        let grid = HEIFAssembler.assemble(tiles: [tile], grid: true, width: 12000, height: 10000)
        let refused = ImageError.tooManyPixels(width: 12000, height: 10000, limit: 100_000_000)
        #expect(throws: refused) { try ImageProbe.probe(bytes: grid) }
        #expect(throws: refused) { try ImagePipeline.process(bytes: grid) }
        #expect(throws: refused) {
            try ImageProbe.probe(fileAt: TestImages.temporaryFile(grid, name: "bomb.heic"))
        }
        // The same grid passes a limit it fits under: the refusal above is the limit's, not libheif's.
        #expect(try ImageProbe.probe(bytes: grid, limits: ImageLimits(maxPixels: 120_000_000)).width == 12000)

        let cropped = HEIFAssembler.assemble(
            tiles: [tile], grid: true, width: 12000, height: 10000, transforms: [.clap(width: 64, height: 48)])
        #expect(throws: refused) { try ImageProbe.probe(bytes: cropped) }
        let info = try ImageProbe.probe(bytes: cropped, limits: ImageLimits(maxPixels: 120_000_000))
        #expect((info.displayWidth, info.displayHeight) == (64, 48))
    }

    @Test func truncatedAndCorruptFiles_AreRefused() throws {
        let heic = try FixtureTools.heic(
            PNGWriter(width: 64, height: 64, colorType: .rgb) { x, y in [x * 4, y * 4, (x ^ y) & 255] }.encode(),
            options: ["-q", "90"])
        let cut = Array(heic.prefix(heic.count - 100))
        #expect(try ImageProbe.isComplete(fileAt: TestImages.temporaryFile(heic, name: "a.heic"), format: .heif))
        #expect(try !ImageProbe.isComplete(fileAt: TestImages.temporaryFile(cut, name: "a.heic"), format: .heif))
        #expect(throws: ImageError.self) { try ImagePipeline.process(bytes: cut) }
        #expect(throws: ImageError.self) { try ImageProbe.probe(bytes: Array(heic.prefix(40))) }
    }
}
