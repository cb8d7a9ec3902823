import Testing

@testable import Imaging

@Suite struct ImageOrientationTests {
    /// Stored 3×2 image [1 2 3; 4 5 6] and how each orientation displays it (EXIF 2.3 §4.6.4, tag 0x0112).
    @Test(arguments: [
        (1, 3, [1, 2, 3, 4, 5, 6]),
        (2, 3, [3, 2, 1, 6, 5, 4]),
        (3, 3, [6, 5, 4, 3, 2, 1]),
        (4, 3, [4, 5, 6, 1, 2, 3]),
        (5, 2, [1, 4, 2, 5, 3, 6]),
        (6, 2, [4, 1, 5, 2, 6, 3]),
        (7, 2, [6, 3, 5, 2, 4, 1]),
        (8, 2, [3, 6, 2, 5, 1, 4]),
    ])
    func apply_DisplaysStoredPixels_ForEachOrientation(orientation: Int, width: Int, expected: [Int]) {
        let stored = PixelBuffer(width: 3, height: 2, channels: 1, bytes: [1, 2, 3, 4, 5, 6])
        let shown = ImageOrientation.apply(orientation, to: stored)
        #expect(shown.width == width)
        #expect(shown.height == 6 / width)
        #expect(shown.bytes == expected.map { UInt8($0) })

        // The same with 4-byte pixels.
        let wide = PixelBuffer(width: 3, height: 2, channels: 4, bytes: (1...6).flatMap { [UInt8($0), 0, 0, 255] })
        let shownWide = ImageOrientation.apply(orientation, to: wide)
        #expect(stride(from: 0, to: 24, by: 4).map { shownWide.bytes[$0] } == expected.map { UInt8($0) })
    }
}

@Suite struct ImageOrientationPlacementTests {
    @Test(arguments: 1...8)
    func placement_AgreesWithApply(orientation: Int) {
        let (w, h) = (5, 3)
        let stored = PixelBuffer(width: w, height: h, channels: 1, bytes: (0..<w * h).map { UInt8($0) })
        let expected = ImageOrientation.apply(orientation, to: stored)
        var placed = [UInt8](repeating: 255, count: w * h)
        for y in 0..<h {
            let (base, step) = ImageOrientation.placement(orientation, width: w, height: h, row: y)
            for x in 0..<w { placed[base + x * step] = stored.bytes[y * w + x] }
        }
        #expect(placed == expected.bytes)
    }
}
