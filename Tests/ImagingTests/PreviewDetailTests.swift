import Testing

@testable import Imaging

/// The detail measure of decision 060: the mean absolute luma gradient, across and down.
@Suite struct PreviewDetailTests {
    @Test func flatImage_HasNone() {
        #expect(PreviewDetail.meanGradient(TestImages.solid(width: 40, height: 24, (90, 160, 30))) == 0)
        #expect(PreviewDetail.meanGradient(TestImages.solid(width: 1, height: 1, (90, 0, 0), gray: true)) == 0)
    }

    /// Gray columns alternating 0 and 255: 255 across, 0 down, 127.5 on average.
    @Test func columns_CountAcrossOnly() {
        var image = PixelBuffer(width: 10, height: 6, channels: 1)
        for y in 0..<6 { for x in stride(from: 1, to: 10, by: 2) { image.bytes[y * 10 + x] = 255 } }
        #expect(PreviewDetail.meanGradient(image) == 127.5)
    }

    /// Colour is weighed as libjpeg's luma (77, 150, 29 of 256): red rows between black ones step
    /// by 255 × 77 / 256 down in every measured pair of rows, and not at all across.
    @Test func colour_IsWeighedAsLuma() {
        var image = TestImages.solid(width: 4, height: 8, (0, 0, 0))
        for y in stride(from: 0, to: 8, by: 2) { for x in 0..<4 { image.bytes[(y * 4 + x) * 4] = 255 } }
        #expect(abs(PreviewDetail.meanGradient(image) - 255.0 * 77 / 256 / 2) < 1e-9)
    }

    /// Only one pair of rows in every `rowPairStep` is measured: a row that differs from its
    /// neighbours outside the pairs is not seen, one inside a pair is.
    @Test func onlyOnePairOfRowsInFour_IsMeasured() {
        #expect(PreviewDetail.rowPairStep == 4)
        var outside = PixelBuffer(width: 5, height: 9, channels: 1)
        for x in 0..<5 { outside.bytes[2 * 5 + x] = 200 }
        #expect(PreviewDetail.meanGradient(outside) == 0)
        var inside = PixelBuffer(width: 5, height: 9, channels: 1)
        for x in 0..<5 { inside.bytes[5 * 5 + x] = 200 }
        // Pairs (0, 1) and (4, 5): 200 down on the second of two pairs, none across.
        #expect(PreviewDetail.meanGradient(inside) == 200.0 / 2 / 2)
    }

    /// The quadrants are flat but for two edges; a one-pixel checkerboard is all edges.
    @Test func quadrantsAreBelowTheRulesThreshold_CheckerboardAbove() {
        let threshold = SourceEncoderSettings.KleinRule.rasterPreviews.detailedGradient
        let quadrants = TestImages.quadrants(
            width: 96, height: 64, TestImages.red, TestImages.green, TestImages.blue, TestImages.yellow)
        #expect(PreviewDetail.meanGradient(quadrants) < threshold)
        #expect(PreviewDetail.meanGradient(SourceEncoderSettingsTests.checkerboard(width: 96, height: 64)) > threshold)
    }
}
