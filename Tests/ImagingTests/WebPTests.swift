import Testing

@testable import Imaging

@Suite struct WebPTests {
    static let spec = PNGTests.spec

    static func solidPNG(_ rgba: [Int], width: Int = 40, height: Int = 30) -> [UInt8] {
        PNGWriter(width: width, height: height, colorType: .rgba) { _, _ in rgba }.encode()
    }

    @Test func process_DecodesLossy() throws {
        let webp = try FixtureTools.webp(PNGTests.quadrantsPNG(), options: ["-q", "95"])
        let result = try ImagePipeline.process(bytes: webp, spec: Self.spec)
        #expect(result.info.format == .webp && result.info.format.contentType == "image/webp")
        #expect((result.info.width, result.info.height) == (96, 64))
        try ImagePipelineTests.expectUprightQuadrants(result.preview.jpeg, width: 64, height: 43)
        try ImagePipelineTests.expectUprightQuadrants(result.thumbnail.jpeg, width: 48, height: 32)
    }

    @Test func process_DecodesLosslessWithAlpha() throws {
        let lossless = try FixtureTools.webp(Self.solidPNG([200, 100, 50, 255]), options: ["-lossless"])
        #expect(try ImagePipeline.process(bytes: lossless, spec: Self.spec).dominantColor == "#c86432")
        // Half-transparent red over white; fully transparent is white whatever colour hides under it.
        let half = try FixtureTools.webp(Self.solidPNG([255, 0, 0, 128]), options: ["-lossless", "-exact"])
        #expect(try ImagePipeline.process(bytes: half, spec: Self.spec).dominantColor == "#ff7f7f")
        let clear = try FixtureTools.webp(Self.solidPNG([0, 0, 255, 0]), options: ["-lossless", "-exact"])
        #expect(try ImagePipeline.process(bytes: clear, spec: Self.spec).dominantColor == "#ffffff")
        // Lossy with an alpha plane.
        let lossy = try FixtureTools.webp(Self.solidPNG([255, 0, 0, 128]), options: ["-q", "95", "-alpha_q", "100"])
        let color = try PNGTests.meanColor(ImagePipeline.process(bytes: lossy, spec: Self.spec).preview.jpeg)
        #expect(ImagePipelineTests.close(color, (255, 127, 127), tolerance: 8), "\(color)")
    }

    @Test func process_UsesTheFirstFrameOfAnAnimation() throws {
        let animation = try FixtureTools.run(
            "img2webp", ["-lossless", "-d", "100", "{0}", "{1}", "-o", "{out}"],
            inputs: [("a.png", Self.solidPNG([220, 30, 30, 255])), ("b.png", Self.solidPNG([30, 40, 210, 255]))],
            output: "out.webp")
        let info = try ImageProbe.probe(bytes: animation)
        #expect((info.width, info.height, info.format) == (40, 30, .webp))
        #expect(try ImagePipeline.process(bytes: animation, spec: Self.spec).dominantColor == "#dc1e1e")
    }

    @Test func probe_RefusesABombBeforeDecoding() {
        // A lossless header declaring 16384×16384 (VP8L: 14-bit sizes minus one, then alpha and version bits).
        let packed = UInt32(16383) | UInt32(16383) << 14
        var chunk: [UInt8] = Array("VP8L".utf8) + [13, 0, 0, 0, 0x2F]
        chunk += [UInt8(packed & 0xFF), UInt8(packed >> 8 & 0xFF), UInt8(packed >> 16 & 0xFF), UInt8(packed >> 24)]
        chunk += [UInt8](repeating: 0, count: 9)
        let riff = Array("RIFF".utf8) + [UInt8(chunk.count + 4), 0, 0, 0] + Array("WEBP".utf8) + chunk
        #expect(throws: ImageError.tooManyPixels(width: 16384, height: 16384, limit: 100_000_000)) {
            try ImageProbe.probe(bytes: riff)
        }
    }

    @Test func truncatedFiles_AreRefused() throws {
        let webp = try FixtureTools.webp(
            PNGWriter(width: 64, height: 64, colorType: .rgb) { x, y in [x * 4, y * 4, (x ^ y) & 255] }.encode(),
            options: ["-q", "90"])
        let cut = Array(webp.prefix(webp.count / 2))
        #expect(try ImageProbe.isComplete(fileAt: TestImages.temporaryFile(webp, name: "a.webp"), format: .webp))
        #expect(try !ImageProbe.isComplete(fileAt: TestImages.temporaryFile(cut, name: "a.webp"), format: .webp))
        #expect(throws: ImageError.self) { try ImagePipeline.process(bytes: cut) }
    }
}
