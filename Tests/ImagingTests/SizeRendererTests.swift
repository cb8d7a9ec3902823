import Testing

@testable import Imaging

/// Display sizes rendered from a derivative: the size asked for, the centred square for the
/// square sizes, never enlarged, colour where it was.
struct SizeRendererTests {
    /// A 1024×768 preview-like JPEG: red, green / blue, yellow quadrants.
    static func source(width: Int = 1024, height: Int = 768) throws -> [UInt8] {
        try TestImages.baseline(
            TestImages.quadrants(
                width: width, height: height, TestImages.red, TestImages.green, TestImages.blue, TestImages.yellow))
    }

    @Test func render_MakesTheSizeAskedFor_WithColoursInPlace() throws {
        let image = try SizeRenderer.render(bytes: Self.source(), width: 240, height: 180, square: false)
        #expect(image.width == 240 && image.height == 180)
        let pixels = try TestImages.decode(image.jpeg)
        #expect(pixels.width == 240 && pixels.height == 180)
        let topLeft = pixels.rgb(x: 30, y: 30)
        let bottomRight = pixels.rgb(x: 210, y: 150)
        #expect(topLeft.r > 180 && topLeft.g < 80, "red quadrant: \(topLeft)")
        #expect(bottomRight.r > 180 && bottomRight.g > 180 && bottomRight.b < 100, "yellow quadrant: \(bottomRight)")
    }

    @Test func render_Square_CropsTheCentre() throws {
        // 1024×512: the centred square is x 256…768, so its left half is red/blue and its right
        // half green/yellow, cut in the middle, not squeezed.
        let image = try SizeRenderer.render(
            bytes: Self.source(width: 1024, height: 512), width: 75, height: 75, square: true)
        #expect(image.width == 75 && image.height == 75)
        let pixels = try TestImages.decode(image.jpeg)
        let left = pixels.rgb(x: 15, y: 15)
        let right = pixels.rgb(x: 60, y: 15)
        #expect(left.r > 180 && left.g < 80, "red: \(left)")
        #expect(right.g > 150 && right.r < 80, "green: \(right)")
    }

    @Test func render_NeverEnlarges() throws {
        let image = try SizeRenderer.render(
            bytes: Self.source(width: 200, height: 100), width: 640, height: 320, square: false)
        #expect(image.width == 200 && image.height == 100)
        let square = try SizeRenderer.render(
            bytes: Self.source(width: 200, height: 100), width: 150, height: 150, square: true)
        #expect(square.width == 100 && square.height == 100)
    }

    @Test func render_RefusesWhatIsNotAJPEG() {
        #expect(throws: ImageError.self) {
            try SizeRenderer.render(bytes: Array("not an image".utf8), width: 10, height: 10, square: false)
        }
    }
}
